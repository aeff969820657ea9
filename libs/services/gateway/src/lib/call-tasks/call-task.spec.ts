import { foldCall } from '@tollgate/call-life';
import { lifeOf } from '@tollgate/call-life/testing';
import { type StoredCall } from '../calls/calls.repository';
import { declaresTasks, taskOf } from './call-task';

/** The task a call is, at each point of its life. */
describe('a paid call as a task', () => {
  const shape = { intentId: '6f1c2b9a-1d3e-4f5a-8b7c-9d0e1f2a3b4c', holdId: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', priceMinor: 250, free: false, fallbacks: 0, final: false };
  const stored = (events: Parameters<typeof foldCall>[1], result: StoredCall['result'] = null): StoredCall => ({
    intent_id: shape.intentId, agent_id: 'agent-1', tool_id: 'tool-1', asset: 'USDC', asset_decimals: 6, created_at: new Date('2026-12-04T10:00:00Z'),
    life: foldCall(shape.intentId, events), result, answer_expired_at: null, outcome_parked: false,
  });
  const now = new Date('2026-12-04T10:00:05Z');

  it('working while it waits, saying for what; its id is the intentId', () => {
    const life = lifeOf({ ...shape, branch: 'confirmed' });
    expect(taskOf(stored(life.events.slice(0, 2)), now)).toMatchObject({
      taskId: shape.intentId, status: 'working', statusMessage: expect.stringMatching(/held/), createdAt: '2026-12-04T10:00:00.000Z', lastUpdatedAt: '2026-12-04T10:00:05.000Z', pollIntervalMs: 1000,
    });
    expect(taskOf(stored(life.events.slice(0, 3)), now).statusMessage).toMatch(/sent to a provider/);
  });

  it('completed with the answer and its receipt once answered (a refusal is a completed tool result)', () => {
    const confirmed = lifeOf({ ...shape, branch: 'confirmed' });
    const task = taskOf(stored(confirmed.events, { content: [{ type: 'text', text: 'olleh' }] }), now);
    expect(task).toMatchObject({ status: 'completed', result: { resultType: 'complete', content: [{ type: 'text', text: 'olleh' }], _meta: { 'assay/receipt': { intentId: shape.intentId } } } });
    const rejected = lifeOf({ ...shape, branch: 'rejected' });
    expect(taskOf(stored(rejected.events), now)).toMatchObject({ status: 'completed', result: { isError: true, _meta: { 'assay/error': { code: 'PROVIDER_CONTRACT_VIOLATION' } } } });
  });

  it('failed, with the error inline and no result, when the provider or the platform could not run it', () => {
    const unsent = lifeOf({ ...shape, branch: 'refused_before_dispatch' });
    const task = taskOf(stored(unsent.events), now);
    expect(task).toMatchObject({ status: 'failed', error: { code: -32603, message: 'deadline passed before sending', data: { 'assay/error': { code: 'PROVIDER_SYSTEM_ERROR' } } } });
    expect(task.result).toBeUndefined();
    const refused = lifeOf({ ...shape, branch: 'payment_refused' });
    expect(taskOf(stored(refused.events), now)).toMatchObject({ status: 'completed', result: { isError: true } });
  });

  it('cancelled when its agent cancelled it before dispatch', () => {
    const cancelled = lifeOf({ ...shape, branch: 'cancelled_before_dispatch' });
    expect(taskOf(stored(cancelled.events), now)).toMatchObject({ status: 'cancelled', statusMessage: expect.stringMatching(/nothing was performed/) });
    expect(taskOf(stored(cancelled.events), now).result).toBeUndefined();
  });

  it('only a client that declares io.modelcontextprotocol/tasks gets tasks', () => {
    expect(declaresTasks({ extensions: { 'io.modelcontextprotocol/tasks': {} } })).toBe(true);
    expect(declaresTasks({ extensions: {} })).toBe(false);
    expect(declaresTasks(undefined)).toBe(false);
  });
});
