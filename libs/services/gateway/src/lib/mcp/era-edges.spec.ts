import { approvalAsInput } from './approval-input';
import { refuseAtEdge } from './edge-input';
import { taskRequestOf } from './task-request';

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
const TASKS = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } };

describe('tasks/* requests the gateway answers itself', () => {
  const body = (method: string, params: Record<string, unknown>, meta: Record<string, unknown> = { ...ENVELOPE, ...TASKS }) => ({ jsonrpc: '2.0', id: 3, method, params: { ...params, _meta: meta } });
  const headers = (method: string, name?: string) => ({ 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });

  it('a well-formed 2026-07-28 tasks/get, tasks/cancel or tasks/update', () => {
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      expect(taskRequestOf(body(method, { taskId: 't-1' }), headers(method, 't-1'))).toEqual({ ok: true, id: 3, method, taskId: 't-1' });
    }
  });

  it('not ours: other methods, notifications, and tasks/* without the 2026-07-28 envelope (the SDK answers those)', () => {
    expect(taskRequestOf(body('tools/call', { name: 'x' }), headers('tools/call', 'x'))).toBeUndefined();
    expect(taskRequestOf({ jsonrpc: '2.0', method: 'tasks/get', params: { taskId: 't' } }, headers('tasks/get', 't'))).toBeUndefined();
    expect(taskRequestOf(body('tasks/get', { taskId: 't' }, {}), {})).toBeUndefined();
    expect(taskRequestOf([body('tasks/get', { taskId: 't' })], {})).toBeUndefined();
  });

  it('the routing headers must mirror the body: -32020, HTTP 400', () => {
    expect(taskRequestOf(body('tasks/get', { taskId: 't-1' }), headers('tasks/get'))).toMatchObject({ ok: false, status: 400, error: { code: -32020 } });
    expect(taskRequestOf(body('tasks/get', { taskId: 't-1' }), headers('tasks/cancel', 't-1'))).toMatchObject({ ok: false, status: 400, error: { code: -32020 } });
  });

  it('a client that did not declare the extension: -32021 naming it, HTTP 400; a missing taskId: -32602', () => {
    expect(taskRequestOf(body('tasks/get', { taskId: 't-1' }, ENVELOPE), headers('tasks/get', 't-1')))
      .toMatchObject({ ok: false, status: 400, error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } } });
    expect(taskRequestOf(body('tasks/get', {}), headers('tasks/get'))).toMatchObject({ ok: false, error: { code: -32602 } });
  });
});

describe('approval required as input_required', () => {
  const refusal = { content: [{ type: 'text', text: 'approval' }], isError: true, _meta: { 'assay/error': { code: 'MCP_APPROVAL_REQUIRED', retryable: true, details: { approvalId: 'a-1', price: { amountMinor: '500', asset: 'USDC' } } } } };
  const form = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };

  it('a client that can show a form gets a prompt keyed by the approval', () => {
    const answer = approvalAsInput(refusal, form, undefined) as { resultType: string; inputRequests: Record<string, { method: string; params: { message: string } }> };
    expect(answer.resultType).toBe('input_required');
    expect(Object.keys(answer.inputRequests)).toEqual(['approval:a-1']);
    expect(answer.inputRequests['approval:a-1']!.params.message).toMatch(/approval a-1/);
  });

  it('no form elicitation, a declined prompt, or another refusal: the refusal itself', () => {
    expect(approvalAsInput(refusal, {}, undefined)).toBe(refusal);
    expect(approvalAsInput(refusal, { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } }, undefined)).toBe(refusal);
    expect(approvalAsInput(refusal, form, { 'approval:a-1': { action: 'decline' } })).toBe(refusal);
    const other = { ...refusal, _meta: { 'assay/error': { code: 'MCP_SPEND_LIMIT_EXCEEDED', retryable: false } } };
    expect(approvalAsInput(other, form, undefined)).toBe(other);
  });

  it('an accepted prompt while the approval is still pending asks again', () => {
    expect(approvalAsInput(refusal, form, { 'approval:a-1': { action: 'accept', content: { approved: true } } })).toMatchObject({ resultType: 'input_required' });
  });
});

describe('input refused before the SDK parses it (its validators recurse)', () => {
  const deep = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`) as unknown;

  it('a catalog call with hostile arguments or _meta: a TOOL_ARGUMENTS_INVALID answer, in the request\'s era', () => {
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'word_count', arguments: { text: deep(5000) } } }))
      .toMatchObject({ kind: 'arguments', id: 1, modern: false, problem: { problem: expect.stringMatching(/nest deeper/) } });
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'word_count', arguments: { text: 'a\u0000b' }, _meta: ENVELOPE } }))
      .toMatchObject({ kind: 'arguments', id: 2, modern: true, problem: { field: 'arguments.text' } });
  });

  it('the discovery tools keep their own string rules (G3.1) but not hostile nesting', () => {
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'a\u0000b' } } })).toBeUndefined();
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_tools', arguments: { query: deep(200) } } })).toMatchObject({ kind: 'arguments' });
  });

  it('any other request nested too deep: -32602 naming the field; ordinary requests pass', () => {
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { x: deep(100) } } })).toMatchObject({ kind: 'params', id: 4 });
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: ENVELOPE } })).toBeUndefined();
    expect(refuseAtEdge({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'word_count', arguments: { text: 'fine' }, _meta: { 'assay/idempotencyKey': 'k' } } })).toBeUndefined();
  });
});
