import { createMcpHandler } from '@modelcontextprotocol/server';

const JSON_MODE_WARNING = "responseMode: 'json' drops mid-call notifications";

/**
 * `createMcpHandler` answering with single JSON bodies (`responseMode: 'json'`), a deliberate choice here: a paid call
 * is answered once, nothing streams mid-call. The SDK warns about that choice on the console once per handler — a
 * dozen lines before the banner of `npm start` — so the warning, and only it, is left out while the handler is made
 * (synchronously); anything else the SDK prints passes.
 */
// The one place console is touched: to leave out one SDK line, not to print.
/* eslint-disable no-console */
export function createJsonMcpHandler(...[factory, options]: Parameters<typeof createMcpHandler>): ReturnType<typeof createMcpHandler> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith(JSON_MODE_WARNING)) return;
    warn(...args);
  };
  try {
    return createMcpHandler(factory, { ...options, responseMode: 'json' });
  } finally {
    console.warn = warn;
  }
}
/* eslint-enable no-console */
