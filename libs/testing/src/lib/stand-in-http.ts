import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** A stand-in's JSON request body (empty: `{}`). */
export async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** Serves a stand-in on loopback (`PORT`, else `defaultPort`) and says `<label> listening on …` once it listens. */
export function serveStandIn(label: string, defaultPort: number, route: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void {
  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => sendJson(res, 500, { error: String(err) }));
  });
  server.listen(Number(process.env['PORT'] ?? defaultPort), '127.0.0.1', () => {
    process.stdout.write(`${label} listening on ${JSON.stringify(server.address())}\n`);
  });
}
