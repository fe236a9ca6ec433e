"""The window in a browser (`--serve`): the same frame() drawn offscreen on the training device, its
frames sent to any browser over HTTP and WebSocket (aiohttp), its input sent back.
docs/guide/serve.md is the user's manual; docs/architecture.md, 'Serving the window', the design."""
