/** What the ops CLIs share: print a service's JSON answer (exit code 1 unless 2xx) and call an admin API with its token. */
export async function show(res: Response): Promise<void> {
  process.stdout.write(`${await res.text()}\n`);
  if (!res.ok) process.exitCode = 1;
}

export function adminFetch(base: string, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return reach(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}

/**
 * fetch, whose network failure names the URL and the cause — "cannot reach
 * http://127.0.0.1:3005/reconciliation: ECONNREFUSED (connection refused)" instead of "fetch failed".
 */
export async function reach(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw new Error(`cannot reach ${url}: ${networkCause(error)}`);
  }
}

const EXPLAINED: Record<string, string> = {
  ECONNREFUSED: 'connection refused — is the service running on that port? (--embedded uses the npm start host)',
  ENOTFOUND: 'no such host', EAI_AGAIN: 'the host name could not be resolved', ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset', EHOSTUNREACH: 'the host is unreachable', UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
};

export function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : typeof cause?.errors?.[0]?.code === 'string' ? String(cause.errors[0].code) : undefined;
  if (code) return `${code}${EXPLAINED[code] ? ` (${EXPLAINED[code]})` : ''}`;
  if (typeof cause?.message === 'string' && cause.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The token for the ledger's finance API: `--ledger-token`, else $LEDGER_TOKEN, else the CLI's admin token (the ledger's admin token reads as an operator). */
export function ledgerToken(explicit: string | undefined, fallback: string | undefined): string {
  const token = explicit ?? process.env['LEDGER_TOKEN'] ?? fallback;
  if (!token) throw new Error('a finance token is required for the ledger (--ledger-token or LEDGER_TOKEN)');
  return token;
}
