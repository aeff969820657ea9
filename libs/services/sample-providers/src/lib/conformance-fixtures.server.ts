import { createMcpHandler, fromJsonSchema, inputRequired, type JsonSchemaType, McpServer, ProtocolError, type RegisteredTool } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** A 1×1 red PNG and an empty 8 kHz WAV: the smallest media the content checks accept. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const WAV_SILENT = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
const MAX_ADDED = 20;

/**
 * "conformance-fixtures": an upstream MCP server with the tools the official MCP conformance suite calls, written from
 * what its scenarios expect (the suite's package ships no server). Registered behind the gateway, its tools are catalog
 * tools, so the suite checks what the gateway carries from an upstream to an agent: content of every type, errors,
 * progress and log notifications, JSON Schema 2020-12 input schemas, an `x-mcp-header` parameter, a tool that needs a
 * client capability the gateway never declares upstream, and a list change (`test_trigger_tool_change` adds a tool and
 * tells `subscriptions/listen` streams, so the gateway's discovery re-syncs and tells its own agents).
 */
export class ConformanceFixtures {
  /** How many tools `test_trigger_tool_change` has added: every call changes the list (a toggle could cancel itself out within discovery's debounce). */
  private added = 0;
  /** Every request (both eras); its bus carries the list change to listen streams. */
  private readonly served = createMcpHandler(() => this.createServer(), { legacy: 'stateless' });
  /** The handler the provider's URL serves: the SDK's, but for the one tool that breaks the rules on purpose. */
  readonly handler = { fetch: async (request: Request, options?: { parsedBody?: unknown }) => ignoringCapabilities(options?.parsedBody) ?? this.served.fetch(request, options as never) };

  createServer(): McpServer {
    const server = new McpServer({ name: 'conformance-fixtures', version: '1.0.0' }, { capabilities: { tools: { listChanged: true }, logging: {} } });
    registerContentTools(server);
    registerNotifyingTools(server);
    registerSchemaTools(server);
    registerTaskTools(server);
    registerInputRequiredTools(server);
    server.registerTool('test_trigger_tool_change', { description: 'Adds a tool (test_added_tool_<n>); after 20, removes them all.', inputSchema: z.object({}) }, async () => {
      this.added = this.added >= MAX_ADDED ? 0 : this.added + 1;
      this.served.notify.toolsChanged();
      return { content: [{ type: 'text', text: `${this.added} tools added` }] };
    });
    for (let n = 1; n <= this.added; n++) {
      server.registerTool(`test_added_tool_${n}`, { description: 'Listed after test_trigger_tool_change.', inputSchema: z.object({}), annotations: readOnly },
        async () => ({ content: [{ type: 'text', text: `added tool ${n}` }] }));
    }
    failProtocolErrorJob(server);
    return server;
  }
}

function registerContentTools(server: McpServer): void {
  const noArgs = z.object({});
  server.registerTool('test_simple_text', { description: 'Returns one text block.', inputSchema: noArgs, annotations: readOnly },
    async () => ({ content: [{ type: 'text', text: 'This is a simple text response for testing.' }] }));
  server.registerTool('test_image_content', { description: 'Returns one PNG image.', inputSchema: noArgs, annotations: readOnly },
    async () => ({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }));
  server.registerTool('test_audio_content', { description: 'Returns one WAV clip.', inputSchema: noArgs, annotations: readOnly },
    async () => ({ content: [{ type: 'audio', data: WAV_SILENT, mimeType: 'audio/wav' }] }));
  server.registerTool('test_embedded_resource', { description: 'Returns one embedded text resource.', inputSchema: noArgs, annotations: readOnly },
    async () => ({ content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }));
  server.registerTool('test_multiple_content_types', { description: 'Returns text, an image and an embedded resource.', inputSchema: noArgs, annotations: readOnly },
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
      ],
    }));
  server.registerTool('test_error_handling', { description: 'Always answers with a tool error.', inputSchema: noArgs, annotations: readOnly },
    async () => ({ isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] }));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function registerNotifyingTools(server: McpServer): void {
  server.registerTool('test_tool_with_progress', { description: 'Reports progress 0, 50 and 100 of 100.', inputSchema: z.object({}), annotations: readOnly }, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message: `${progress}%` } });
      if (progress < 100) await pause(50);
    }
    return { content: [{ type: 'text', text: 'Progress test completed' }] };
  });
  server.registerTool('test_tool_with_logging', { description: 'Logs three lines at info while it runs.', inputSchema: z.object({}), annotations: readOnly }, async (_args, ctx) => {
    for (const [i, line] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (i > 0) await pause(50);
      await ctx.mcpReq.log('info', line);
    }
    return { content: [{ type: 'text', text: 'Logging test completed' }] };
  });
  // Asks the client for a sampling round (2026-07-28 multi-round-trip). A client that did not declare sampling gets
  // -32021 (MissingRequiredClientCapability) from the SDK; the gateway never declares it upstream (an upstream cannot
  // turn a paid call into an interaction), so through the gateway this tool always ends in -32021.
  server.registerTool('test_missing_capability', { description: 'Needs the client to offer sampling.', inputSchema: z.object({}), annotations: readOnly }, async () =>
    inputRequired({ inputRequests: { summary: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 16 }) } }));
}

/** The input schema the JSON Schema 2020-12 scenario expects to survive tools/list keyword for keyword. */
const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' }, address: { $ref: '#/$defs/address' }, contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' }, email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

function registerSchemaTools(server: McpServer): void {
  server.registerTool('json_schema_2020_12_tool', { description: 'Takes a contact described in JSON Schema 2020-12.', inputSchema: fromJsonSchema(SCHEMA_2020_12 as JsonSchemaType), annotations: readOnly },
    async (args) => ({ content: [{ type: 'text', text: `contact received: ${JSON.stringify(args)}` }] }));
  // `region` travels in the Mcp-Param-Region header as well as in the arguments (SEP-2243), so a load balancer can route on it.
  const regional = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } }, required: ['region'] };
  server.registerTool('test_header_param', { description: 'Echoes a region that is also sent as a header.', inputSchema: fromJsonSchema(regional as JsonSchemaType), annotations: readOnly },
    async (args) => ({ content: [{ type: 'text', text: `region: ${String((args as { region?: unknown }).region)}` }] }));
}

/**
 * The tasks suite's fixtures. The provider runs them in one request (SDK v2 has no server side of the tasks extension);
 * what makes them task-supporting is the listing (and, for a 2025-era client, `execution.taskSupport`), which the
 * gateway's catalog keeps, so the gateway answers a task-declaring agent with a task at once and runs the call behind it.
 */
function registerTaskTools(server: McpServer): void {
  // A 2025-era listing says it in `execution`; a 2026-07-28 one no longer has the field, so the provider's listing says it.
  const asTask = (tool: RegisteredTool, taskSupport: 'optional' | 'required' = 'optional') => {
    tool.update({ _meta: { 'tollgate/listing': { taskSupport } } });
    return Object.assign(tool, { execution: { taskSupport } });
  };
  server.registerTool('greet', { description: 'Greets by name, at once (never a task).', inputSchema: z.object({ name: z.string() }), annotations: readOnly },
    async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] }));
  // The suite asks for up to 60 s; the fixture sleeps at most 5 (the suite waits 10 s for a cancelled task to end; a gateway call is bounded at 30 s by R6 anyway).
  asTask(server.registerTool('slow_compute', { description: 'Sleeps the given seconds (at most 5), then answers.', inputSchema: z.object({ seconds: z.number().min(0).max(60), label: z.string().optional() }), annotations: readOnly },
    async ({ seconds, label }) => {
      await pause(Math.min(seconds, 5) * 1000);
      return { content: [{ type: 'text', text: `Computed ${label ?? 'result'} after ${seconds}s` }] };
    }));
  asTask(server.registerTool('failing_job', { description: 'Runs about a second, then reports a tool error.', inputSchema: z.object({}), annotations: readOnly },
    async () => {
      await pause(1000);
      return { isError: true, content: [{ type: 'text', text: 'The job failed' }] };
    }), 'required');
  asTask(server.registerTool('protocol_error_job', { description: 'Fails with a protocol-level error.', inputSchema: z.object({}), annotations: readOnly },
    async () => ({ content: [] })));
}

/**
 * `protocol_error_job` answers a JSON-RPC error, not a tool result: McpServer turns anything its tools throw into a
 * tool error, so the fixture answers that one call in front of McpServer's own tools/call handler.
 */
function failProtocolErrorJob(server: McpServer): void {
  type Handler = (request: unknown, ctx: unknown) => Promise<unknown>;
  const tools = (server.server as unknown as { _getRequestHandler(method: string): Handler })._getRequestHandler('tools/call');
  server.server.removeRequestHandler('tools/call');
  server.server.setRequestHandler('tools/call', (request, ctx) => {
    if (request.params.name === 'protocol_error_job') throw new ProtocolError(-32603, 'protocol_error_job failed on purpose');
    return tools(request, ctx) as never;
  });
}

/** The suite's multi-round-trip tools, each asking for what its scenario names (SEP-2322), by the SDK's rules. */
const INPUT_REQUESTS = {
  test_input_required_result_elicitation: () => ({ user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }) }),
  test_input_required_result_sampling: () => ({ capital_question: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }) }),
  test_input_required_result_list_roots: () => ({ client_roots: inputRequired.listRoots() }),
  test_input_required_result_request_state: () => ({ confirm: inputRequired.elicit({ message: 'Continue?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }) }),
  test_input_required_result_multiple_inputs: () => ({
    user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }),
    greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 50 }),
  }),
  test_input_required_result_multi_round: () => ({ step_one: inputRequired.elicit({ message: 'Step one?', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } }) }),
  test_input_required_result_tampered_state: () => ({ confirm: inputRequired.elicit({ message: 'Continue?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }) }),
  test_input_required_result_capabilities: () => ({ capital_question: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 20 }) }),
} as const;

/**
 * The SDK refuses every one of them to a client that did not declare the capability (-32021), and the gateway declares
 * none upstream: an upstream cannot turn a paid call into an interaction (R4). Through the gateway each ends in -32021.
 */
function registerInputRequiredTools(server: McpServer): void {
  for (const [name, requests] of Object.entries(INPUT_REQUESTS)) {
    server.registerTool(name, { description: 'Asks the client for input before it answers.', inputSchema: z.object({}), annotations: readOnly },
      async () => inputRequired({ inputRequests: requests() }));
  }
  server.registerTool('test_input_required_ignoring_capabilities', { description: 'Asks for input whatever the client declared (breaks the rules).', inputSchema: z.object({}), annotations: readOnly },
    async () => ({ content: [] }));
}

/** `test_input_required_ignoring_capabilities` answered raw, as a provider that breaks the rules would (the SDK would not). */
function ignoringCapabilities(body: unknown): Response | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } } | undefined;
  if (message?.method !== 'tools/call' || message.params?.name !== 'test_input_required_ignoring_capabilities') return undefined;
  const inputRequests = { user_name: { method: 'elicitation/create', params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } } };
  return Response.json({ jsonrpc: '2.0', id: message.id, result: { resultType: 'input_required', inputRequests } });
}
