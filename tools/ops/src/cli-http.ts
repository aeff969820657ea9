/** What the ops CLIs share: print a service's JSON answer (exit code 1 unless 2xx) and call an admin API with its token. */
export async function show(res: Response): Promise<void> {
  process.stdout.write(`${await res.text()}\n`);
  if (!res.ok) process.exitCode = 1;
}

export function adminFetch(base: string, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}

/** The token for the ledger's finance API: `--ledger-token`, else $LEDGER_TOKEN, else the CLI's admin token (the ledger's admin token reads as an operator). */
export function ledgerToken(explicit: string | undefined, fallback: string | undefined): string {
  const token = explicit ?? process.env['LEDGER_TOKEN'] ?? fallback;
  if (!token) throw new Error('a finance token is required for the ledger (--ledger-token or LEDGER_TOKEN)');
  return token;
}
