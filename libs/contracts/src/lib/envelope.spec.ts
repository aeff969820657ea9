import { buildEnvelope, decodeEnvelope, decodeProduced, produceEvent } from './envelope';
import { CallRequested, PaymentHeld } from './events';
import { money } from './money';
import { ContractViolationError } from './validation';
import { digestOf } from './canonical-json';
import { TOPIC_NAME_PATTERN, TopicSpecs } from './topics';
import { AllEvents } from './events';

const intentId = '0b6c3b0e-4a53-4f4e-9f53-5d5a1c0f2d11';
const validRequest = () => ({
  intentId,
  ownerId: 'owner-1',
  agentId: 'agent-1',
  mcpUrlId: 'url-1',
  toolId: 'tool-1',
  toolName: 'echo',
  contractVersion: 1,
  arguments: { message: 'hi' },
  argumentsHash: digestOf({ message: 'hi' }),
  price: money(0n, 'USDC'),
  deadlineAt: new Date().toISOString(),
});

describe('event contracts (B3: validated on produce and on consume)', () => {
  it('keys call-life events by intentId and round-trips through the wire format', () => {
    const env = buildEnvelope(CallRequested, validRequest(), { producer: 'gateway' });
    expect(env.key).toBe(intentId);
    expect(env.type).toBe('CallRequested');
    const decoded = decodeEnvelope(CallRequested, JSON.stringify(env));
    expect(decoded.payload.arguments).toEqual({ message: 'hi' });
    expect(decoded.payload.price.amountMinor).toBe('0');
  });

  it('decodes what this process produced exactly as the wire decoder does, without validating it again', () => {
    const made = produceEvent(CallRequested, { ...validRequest(), price: money(250n, 'USDC') }, { producer: 'gateway', causationId: intentId });
    const text = JSON.stringify(made.envelope);
    const fromWire = decodeEnvelope(CallRequested, text);
    const produced = decodeProduced(CallRequested, text, made.payload);
    expect(produced).toEqual(fromWire);
    expect(produced.envelope.constructor).toBe(fromWire.envelope.constructor);
    expect(produced.payload.constructor).toBe(fromWire.payload.constructor);
    expect(produced.payload.price.constructor).toBe(fromWire.payload.price.constructor);
    expect(() => decodeProduced(PaymentHeld, text, made.payload as never)).toThrow(/not PaymentHeld/);
  });

  it('refuses to produce an invalid payload, naming the field', () => {
    const bad = { ...validRequest(), contractVersion: 0 };
    expect(() => buildEnvelope(CallRequested, bad, { producer: 'gateway' })).toThrow(/contractVersion/);
  });

  it('refuses fractional or float money', () => {
    const bad = { ...validRequest(), price: { amountMinor: '1.5', asset: 'USDC' } };
    expect(() => buildEnvelope(CallRequested, bad, { producer: 'gateway' })).toThrow(ContractViolationError);
  });

  it('refuses unknown payload properties on consume', () => {
    const env = buildEnvelope(PaymentHeld, { intentId, holdId: intentId, ownerId: 'o', amount: money(5n, 'USDC') }, { producer: 'payment' });
    const tampered = { ...env, payload: { ...env.payload, extra: 1 } };
    expect(() => decodeEnvelope(PaymentHeld, JSON.stringify(tampered))).toThrow(/extra/);
  });

  it('refuses a message of another event type and non-JSON values', () => {
    const env = buildEnvelope(PaymentHeld, { intentId, holdId: intentId, ownerId: 'o', amount: money(5n, 'USDC') }, { producer: 'payment' });
    expect(() => decodeEnvelope(CallRequested, JSON.stringify(env))).toThrow(/expected CallRequested/);
    expect(() => decodeEnvelope(CallRequested, 'not json')).toThrow(/not JSON/);
  });

  it('names every topic <context>.<entity>.<event>.v<N>, once each, and every event has a listed topic', () => {
    const names = TopicSpecs.map((t) => t.name);
    for (const n of names) expect(n).toMatch(TOPIC_NAME_PATTERN);
    expect(new Set(names).size).toBe(names.length);
    for (const e of AllEvents) expect(names).toContain(e.topic);
  });
});
