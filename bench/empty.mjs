// Deliberately empty: bench/startup.mjs imports it before the plugin, so the
// plugin's phases and memory exclude Node's one-time ESM file-loader start-up
// (any ES-module host has paid it before it loads a plugin).
