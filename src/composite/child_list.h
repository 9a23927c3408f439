// A composite's children as a copy-on-write list. Copying a record copies a pointer per child;
// a child is copied only when it is edited (Mut) while another copy of the list still shares it.
// A driver holds its store's copy of the record, the copy an update edits and the copy the update
// answers: at 10,000 trials those share one set of children instead of being three (issue 51: a
// 10,000-trial sweep's driver under 16 MiB), and the store finds what an edit changed by pointer
// before comparing values.
//
// Reading is a vector's (size, [i], iteration, front/back, all const); editing is explicit:
//   for (size_t i = 0; i < list.size(); ++i) if (wants(list[i])) list.Mut(i).phase = ...;
// A `T&` from Mut stays valid while the list holds that child (children never move in memory).
#pragma once

#include <compare>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace torchx::composite {

template <typename T>
class ChildList {
  using Items = std::vector<std::shared_ptr<T>>;

 public:
  using value_type = T;
  using size_type = size_t;

  /// Iterates the children as `const T&` (random access, like a vector's const_iterator).
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    explicit const_iterator(typename Items::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    reference operator[](difference_type n) const { return *it_[n]; }
    const_iterator& operator++() { return ++it_, *this; }
    const_iterator operator++(int) { return const_iterator(it_++); }
    const_iterator& operator--() { return --it_, *this; }
    const_iterator operator--(int) { return const_iterator(it_--); }
    const_iterator& operator+=(difference_type n) { return it_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return it_ -= n, *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) { return a.it_ - b.it_; }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.it_ == b.it_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.it_ <=> b.it_; }

   private:
    typename Items::const_iterator it_;
  };
  using iterator = const_iterator;

  ChildList() = default;
  ChildList(std::initializer_list<T> items) {
    items_.reserve(items.size());
    for (const T& c : items) push_back(c);
  }
  explicit ChildList(std::vector<T> items) {
    items_.reserve(items.size());
    for (T& c : items) push_back(std::move(c));
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const T& operator[](size_t i) const { return *items_[i]; }
  const T& at(size_t i) const { return *items_.at(i); }
  const T& front() const { return *items_.front(); }
  const T& back() const { return *items_.back(); }
  const_iterator begin() const { return const_iterator(items_.begin()); }
  const_iterator end() const { return const_iterator(items_.end()); }
  std::reverse_iterator<const_iterator> rbegin() const { return std::reverse_iterator(end()); }
  std::reverse_iterator<const_iterator> rend() const { return std::reverse_iterator(begin()); }

  /// Child `i`, to edit: copied first if another list shares it.
  T& Mut(size_t i) {
    std::shared_ptr<T>& p = items_.at(i);
    if (p.use_count() > 1) p = std::make_shared<T>(std::as_const(*p));
    return *p;
  }
  T& MutBack() { return Mut(items_.size() - 1); }

  void push_back(T c) { items_.push_back(std::make_shared<T>(std::move(c))); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return *items_.emplace_back(std::make_shared<T>(std::forward<Args>(args)...));
  }
  void reserve(size_t n) { items_.reserve(n); }
  void clear() { items_.clear(); }
  void pop_back() { items_.pop_back(); }
  /// Keeps the first `n` children, or adds default ones up to `n`.
  void resize(size_t n) {
    if (n < items_.size()) items_.resize(n);
    while (items_.size() < n) items_.push_back(std::make_shared<T>());
  }

  /// Whether child `i` of this list and child `j` of `other` are the same object: neither was
  /// edited since one list was copied from the other.
  bool SameChild(size_t i, const ChildList& other, size_t j) const { return items_[i] == other.items_[j]; }

  /// The children as a plain vector (a copy of each).
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const ChildList& a, const ChildList& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a.SameChild(i, b, i) && !(a[i] == b[i])) return false;
    }
    return true;
  }

 private:
  Items items_;
};

}  // namespace torchx::composite
