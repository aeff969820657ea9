import { McpServer } from '@modelcontextprotocol/server';
import { createJsonMcpHandler } from './json-mcp-handler';

describe('createJsonMcpHandler', () => {
  it('leaves out only the SDK\'s json-mode warning, and restores console.warn', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const original = console.warn;
    try {
      const handler = createJsonMcpHandler(() => new McpServer({ name: 't', version: '1' }).server, { legacy: 'reject' });
      expect(typeof handler.fetch).toBe('function');
      expect(warn).not.toHaveBeenCalled();
      expect(console.warn).toBe(original);
    } finally {
      warn.mockRestore();
    }
  });
});
