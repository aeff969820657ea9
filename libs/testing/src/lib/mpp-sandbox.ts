import { type SandboxState } from '../mpp-verifier/sandbox-book';
import { freePort, type RunningProcess, startTsProcess } from './processes';

/** The sandbox MPP method's backend (libs/testing/src/mpp-verifier) as its own process, and what tests ask of it. */
export interface TestMppSandbox {
  url: string;
  process: RunningProcess;
  /** A payer token holding `amount` (what an MPP client signs credentials with). */
  wallet(amount: bigint): Promise<string>;
  fault(kind: 'die-after-payment' | 'refuse-capture' | 'down' | 'none', times?: number): Promise<void>;
  state(): Promise<SandboxState>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestMppSandbox(o: { stateFile: string; token?: string }): Promise<TestMppSandbox> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const start = async () => {
    const p = startTsProcess('mpp-sandbox', 'libs/testing/src/mpp-verifier/main.ts', [], { PORT: String(port), MPP_SANDBOX_STATE: o.stateFile, ...(o.token ? { MPP_SANDBOX_TOKEN: o.token } : {}) });
    await p.waitForOutput(/mpp sandbox listening/, 60_000);
    return p;
  };
  const admin = async (method: string, path: string, body?: unknown) =>
    (await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })).json();
  const s: TestMppSandbox = {
    url,
    process: await start(),
    wallet: async (amount) => ((await admin('POST', '/admin/wallets', { amount: amount.toString() })) as { token: string }).token,
    async fault(kind, times = 1) {
      await admin('POST', '/admin/faults', { fault: { kind }, times });
    },
    state: async () => (await admin('GET', '/admin/state')) as SandboxState,
    async restart() {
      await s.process.stop('SIGKILL').catch(() => undefined);
      s.process = await start();
    },
    async stop() {
      await s.process.stop();
    },
  };
  return s;
}
