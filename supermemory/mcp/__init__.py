"""The MCP stdio server: a hand-rolled JSON-RPC 2.0 loop, the MCP lifecycle and the memory tools.

No SDK at runtime. Frames are newline-delimited JSON objects in UTF-8 on stdin/stdout; stdout
belongs to the protocol, so while serving `sys.stdout` and fd 1 point at stderr and frames go to a
private duplicate of the original stdout.

Two error channels:
- protocol errors (bad JSON, bad request shape, unknown method, bad params) are JSON-RPC errors;
- store errors inside `tools/call` (every `SupermemoryError`) are tool results with `isError: true`;
  so are arguments that fail a tool's input schema when the negotiated protocol is 2025-11-25 or
  later (SEP-1303; earlier versions get INVALID_PARAMS). An unknown tool stays INVALID_PARAMS.

`initialize` never imports numpy or onnxruntime; the embedding model warms up in a daemon thread
after `notifications/initialized`. The store is opened lazily and only ever used on the main thread.
Batches (JSON arrays) are not supported and get an `INVALID_REQUEST` error.

Modules, each importing only those above it:
- `protocol`: error codes, protocol versions, `JsonRpcError`, error frames, frame reading and writing;
- `validation`: the JSON Schema subset the tool input schemas use;
- `fitting`: cutting results down to `mcp.max_response_bytes`;
- `tools`: the tool table (schemas, annotations, one store method per tool; texts from `render`);
- `methods`: `HANDLERS`, the MCP methods (initialize, tools/list, tools/call, ...);
- `session`: one client connection (namespace, roots, store, warm-up) and its frame dispatch;
- `server`: `serve()`, the process side (stdout, signals, the parent watch).
"""
