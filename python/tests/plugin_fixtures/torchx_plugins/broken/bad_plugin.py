"""A plugin module that fails to import: the registry must report it and carry on."""

raise RuntimeError("this plugin is broken on purpose")
