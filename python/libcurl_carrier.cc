// torchx/_libcurl.so: no code of its own. It is linked against libcurl (python/CMakeLists.txt) so
// that auditwheel copies libcurl and its dependencies into the wheel and points this object at
// them; http/curl_api.cc opens it first and looks libcurl's functions up through its handle.
extern "C" {
extern const int torchx_libcurl_carrier;
const int torchx_libcurl_carrier = 1;
}
