/**
 * The chain-state reader (viem over JSON-RPC) against the stand-in chain in its own process: a settled authorization
 * reads as transferred in its transaction, an unused one as unused with the chain's time, a cancelled one as used
 * otherwise, a transfer to someone else's address not as ours, and a chain that does not answer as unreadable.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestFacilitator, type TestFacilitator, testPayer } from '@tollgate/testing';
import { RpcChainState } from '../src/lib/x402/rpc-chain-state';

jest.setTimeout(120_000);

const NETWORK = 'eip155:84532';
const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAY_TO = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
const REQ = { scheme: 'exact', network: NETWORK, amount: '250', asset: ASSET, payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: 'USDC', version: '2' } };

describe('RpcChainState against the stand-in chain (B: the chain is the verdict)', () => {
  let dir: string;
  let facilitator: TestFacilitator;
  let chain: RpcChainState;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-chain-'));
    facilitator = await startTestFacilitator({ stateFile: path.join(dir, 'state.json'), network: NETWORK });
    chain = new RpcChainState({ url: facilitator.rpcUrl, timeoutMs: 2_000, lookbackBlocks: 1_000n });
  });
  afterAll(async () => {
    await facilitator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const settle = async (req = REQ) => {
    const payer = testPayer();
    await facilitator.fund(payer.address, 1_000n);
    const payment = await payer.sign(req);
    const r = await fetch(`${facilitator.url}/settle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: req }) });
    return { payer, payment, answer: (await r.json()) as { success: boolean; transaction: string; errorReason?: string } };
  };
  const query = (payer: string, nonce: string, over: Partial<{ payTo: string; value: bigint }> = {}) =>
    chain.authorization({ network: NETWORK, asset: ASSET, payer, nonce, payTo: PAY_TO, value: 250n, ...over });

  it('reads a settled authorization as transferred to us, in the transaction that carried it', async () => {
    const { payer, payment, answer } = await settle();
    expect(answer.success).toBe(true);
    expect(await query(payer.address, payment.payload.authorization.nonce)).toEqual({ kind: 'transferred', transaction: answer.transaction });
  });

  it('a repeat of that settle is answered "nonce already used" (the stand-in does not deduplicate, like a real facilitator)', async () => {
    const { payment } = await settle();
    const again = await fetch(`${facilitator.url}/settle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: REQ }) });
    expect(await again.json()).toMatchObject({ success: false, errorReason: expect.stringMatching(/nonce_used/) });
  });

  it('does not take a transfer of another value or to another address for ours', async () => {
    const { payer, payment } = await settle();
    const nonce = payment.payload.authorization.nonce;
    expect(await query(payer.address, nonce, { value: 251n })).toEqual({ kind: 'used-otherwise' });
    expect(await query(payer.address, nonce, { payTo: '0x000000000000000000000000000000000000dEaD' })).toEqual({ kind: 'used-otherwise' });
  });

  it('reads an unused nonce as unused, with the chain\'s time', async () => {
    const verdict = await query(testPayer().address, `0x${randomBytes(32).toString('hex')}`);
    expect(verdict.kind).toBe('unused');
    const now = BigInt(Math.floor(Date.now() / 1000));
    expect(verdict.kind === 'unused' && verdict.chainTime >= now - 5n && verdict.chainTime <= now + 5n).toBe(true);
  });

  it('reads a cancelled authorization as used otherwise (nothing moved to us)', async () => {
    const payer = testPayer();
    const nonce = `0x${randomBytes(32).toString('hex')}`;
    await facilitator.cancel(payer.address, nonce, ASSET);
    expect(await query(payer.address, nonce)).toEqual({ kind: 'used-otherwise' });
  });

  it('gives no verdict while the chain does not answer', async () => {
    await facilitator.fault({ kind: 'rpc-down' }, 10);
    const verdict = await query(testPayer().address, `0x${randomBytes(32).toString('hex')}`);
    expect(verdict).toMatchObject({ kind: 'unreadable', problem: expect.stringMatching(/^chain: /) });
    await facilitator.fault({ kind: 'none' }, 0);
  });

  describe('upto (Permit2): the nonce bitmap and the proxy\'s settle decide', () => {
    /** An upto authorization of 1,000 signed by `@x402/evm`'s client to the stand-in's facilitator address, settled for `charge`. */
    const settleUpto = async (charge: bigint) => {
      const supported = (await (await fetch(`${facilitator.url}/supported`)).json()) as { kinds: { scheme: string; extra?: { facilitatorAddress: string } }[] };
      const req = { ...REQ, scheme: 'upto', amount: '1000', extra: { ...REQ.extra, assetTransferMethod: 'permit2', facilitatorAddress: supported.kinds.find((k) => k.scheme === 'upto')!.extra!.facilitatorAddress } };
      const payer = testPayer();
      await facilitator.fund(payer.address, 5_000n);
      const payment = await payer.signUpto(req);
      const r = await fetch(`${facilitator.url}/settle`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: { ...req, amount: charge.toString() } }),
      });
      return { payer, nonce: `permit2:${payment.payload.permit2Authorization.nonce}`, answer: (await r.json()) as { success: boolean; transaction: string } };
    };

    it('reads a settled permit as transferred for the charge, and not for another amount', async () => {
      const { payer, nonce, answer } = await settleUpto(420n);
      expect(answer.success).toBe(true);
      expect(await query(payer.address, nonce, { value: 420n })).toEqual({ kind: 'transferred', transaction: answer.transaction });
      expect(await query(payer.address, nonce, { value: 1_000n })).toMatchObject({ kind: 'unreadable', problem: expect.stringContaining('not the charge 1000') });
    });

    it('reads an unused permit nonce as unused, with the chain\'s time', async () => {
      expect(await query(testPayer().address, 'permit2:123456789012345678901234567890')).toMatchObject({ kind: 'unused' });
    });
  });
});
