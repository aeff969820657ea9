/** What the ops CLIs share: print a service's JSON answer (exit code 1 unless 2xx) and call an admin API with its token. */
export async function show(res: Response): Promise<void> {
  process.stdout.write(`${await res.text()}\n`);
  if (!res.ok) process.exitCode = 1;
}

export function adminFetch(base: string, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}
