import { randomUUID } from 'node:crypto';
import { IsString, IsUUID } from 'class-validator';
import { buildEnvelope, ContractViolationError, decodeEnvelope, defineEvent, produceEvent, type TopicName } from '@tollgate/contracts';
import { decodeOnce, rememberProduced } from './decode-once';

class NotePayload {
  @IsUUID() intentId!: string;
  @IsString() text!: string;
}
const Note = defineEvent({ type: 'NoteRecorded', version: 1, topic: 'test.note.recorded.v1' as TopicName, payload: NotePayload, keyOf: (p) => p.intentId });
const message = (text: string) => JSON.stringify(buildEnvelope(Note, { intentId: randomUUID(), text }, { producer: 'test' }));

/** Each message validated once per process, with the memory it may hold bounded. */
describe('decodeOnce', () => {
  it('hands every consumer of a message the one decoded copy', () => {
    const m = message('hello');
    expect(decodeOnce(Note, m)).toBe(decodeOnce(Note, m));
    expect(decodeOnce(Note, m).payload.text).toBe('hello');
  });

  it('a message this process produced is handed on as remembered, equal to what validating it would give', () => {
    const made = produceEvent(Note, { intentId: randomUUID(), text: 'mine' }, { producer: 'test' });
    const m = JSON.stringify(made.envelope);
    rememberProduced(Note, m, made.payload);
    const first = decodeOnce(Note, m);
    expect(first.payload).toBe(made.payload);
    expect(decodeOnce(Note, m)).toBe(first);
    expect(first).toEqual(decodeEnvelope(Note, m));
    expect(first.payload).toBeInstanceOf(NotePayload);
  });

  it('never keeps a large message (decoded again each time), nor a message that breaks its contract', () => {
    const big = message('x'.repeat(100_000));
    const first = decodeOnce(Note, big);
    expect(first.payload.text).toHaveLength(100_000);
    expect(decodeOnce(Note, big)).not.toBe(first);
    const bad = JSON.stringify({ ...JSON.parse(message('y')), payload: { intentId: 'nope' } });
    expect(() => decodeOnce(Note, bad)).toThrow(ContractViolationError);
    expect(() => decodeOnce(Note, bad)).toThrow(ContractViolationError);
  });
});
