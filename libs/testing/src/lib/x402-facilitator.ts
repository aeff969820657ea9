import { type ChainTransfer, type FacilitatorState } from '../x402-facilitator/facilitator-ledger';
import { freePort, type RunningProcess, startTsProcess } from './processes';

export type FacilitatorFault = { kind: 'delay'; delayMs: number } | { kind: 'die-after-transfer' } | { kind: 'die-before-transfer' } | { kind: 'rpc-down' } | { kind: 'refuse-partial' } | { kind: 'none' };

/** The stand-in x402 facilitator (libs/testing/src/x402-facilitator) as its own process, and what tests ask of it. */
export interface TestFacilitator {
  url: string;
  /** The stand-in chain's JSON-RPC (PAYMENT_X402_CHAIN_RPC). */
  rpcUrl: string;
  /** The payer cancels an authorization on the chain (its nonce spent, nothing moved). */
  cancel(from: string, nonce: string, asset: string): Promise<void>;
  process: RunningProcess;
  fund(address: string, amount: bigint): Promise<void>;
  fault(fault: FacilitatorFault, times?: number): Promise<void>;
  state(): Promise<FacilitatorState>;
  transfersFrom(address: string): Promise<ChainTransfer[]>;
  /** Starts it again on the same port and state file (after it died, or was killed); `address`: its upto signer from now on. */
  restart(o?: { address?: string }): Promise<void>;
  stop(): Promise<void>;
}

/** `dedupes`: whether it honours x402's payment-identifier (real facilitators do not; the default is not to). */
export async function startTestFacilitator(o: { stateFile: string; token?: string; network?: string; dedupes?: boolean; refusesPartial?: boolean }): Promise<TestFacilitator> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let address: string | undefined;
  const start = async () => {
    const p = startTsProcess('x402-facilitator', 'libs/testing/src/x402-facilitator/main.ts', [], {
      ...(address ? { FACILITATOR_ADDRESS: address } : {}),
      PORT: String(port), FACILITATOR_STATE: o.stateFile, FACILITATOR_NETWORK: o.network ?? 'eip155:84532', ...(o.token ? { FACILITATOR_TOKEN: o.token } : {}),
      FACILITATOR_DEDUPES: String(o.dedupes === true), FACILITATOR_REFUSES_PARTIAL: String(o.refusesPartial === true),
    });
    await p.waitForOutput(/x402 facilitator listening/, 60_000);
    return p;
  };
  const admin = async (method: string, path: string, body?: unknown) =>
    (await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })).json();
  const f: TestFacilitator = {
    url,
    rpcUrl: `${url}/rpc`,
    async cancel(from, nonce, asset) {
      await admin('POST', '/admin/cancel', { from, nonce, asset });
    },
    process: await start(),
    async fund(address, amount) {
      await admin('POST', '/admin/fund', { address, amount: amount.toString() });
    },
    async fault(fault, times = 1) {
      await admin('POST', '/admin/faults', { fault, times });
    },
    state: async () => (await admin('GET', '/admin/state')) as FacilitatorState,
    async transfersFrom(address) {
      return (await f.state()).transfers.filter((t) => t.kind !== 'cancel' && t.from.toLowerCase() === address.toLowerCase());
    },
    async restart(o = {}) {
      if (o.address) address = o.address;
      await f.process.stop('SIGKILL').catch(() => undefined);
      f.process = await start();
    },
    async stop() {
      await f.process.stop();
    },
  };
  return f;
}
