/** The MCP tasks extension's name (2026-07-28): a client that declares it may be answered with a task. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
