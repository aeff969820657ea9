import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { CALL_EVENT_TYPES, CALL_ROUTE, routeTable, type CallEventType } from '@tollgate/call-life';
import { arbitraryLife } from '@tollgate/call-life/testing';
import { ServiceEvents } from '@tollgate/contracts';

const declared = (service: keyof typeof ServiceEvents, side: 'emits' | 'consumes') =>
  new Set<string>((ServiceEvents[service][side] as readonly { type: string }[]).map((e) => e.type));
const isCallEvent = (t: string): t is CallEventType => (CALL_EVENT_TYPES as readonly string[]).includes(t);

describe('the route of a call (data beside the model) agrees with what services declare', () => {
  it('every step reads only events its service consumes and emits only events it declares', () => {
    for (const step of CALL_ROUTE) {
      for (const t of step.reads) expect({ step: step.decision, reads: t, consumed: declared(step.service, 'consumes').has(t) }).toEqual({ step: step.decision, reads: t, consumed: true });
      for (const t of step.emits) expect({ step: step.decision, emits: t, declared: declared(step.service, 'emits').has(t) }).toEqual({ step: step.decision, emits: t, declared: true });
    }
  });

  it('every call event a service emits or consumes appears on its route', () => {
    for (const service of ['gateway', 'payment', 'execution', 'settlement', 'ledger'] as const) {
      const steps = CALL_ROUTE.filter((s) => s.service === service);
      const onRoute = { emits: new Set(steps.flatMap((s) => s.emits)), reads: new Set(steps.flatMap((s) => s.reads)) };
      expect({ service, emits: [...declared(service, 'emits')].filter(isCallEvent).filter((t) => !onRoute.emits.has(t)) }).toEqual({ service, emits: [] });
      expect({ service, consumes: [...declared(service, 'consumes')].filter(isCallEvent).filter((t) => !onRoute.reads.has(t)) }).toEqual({ service, consumes: [] });
    }
  });

  it('every event on the route is emitted by some step, and the generated lives use each of them', () => {
    const emitted = new Set(CALL_ROUTE.flatMap((s) => s.emits));
    expect(CALL_EVENT_TYPES.filter((t) => !emitted.has(t))).toEqual([]);
    const seen = new Set(fc.sample(arbitraryLife(), 500).flatMap((l) => l.events.map((e) => e.type)));
    expect(CALL_EVENT_TYPES.filter((t) => !seen.has(t))).toEqual([]);
  });

  it('a step delivers inline or lets wait only what it reads', () => {
    for (const step of CALL_ROUTE) {
      const reads = new Set<string>(step.reads);
      expect({ step: step.decision, extra: [...(step.inline ?? []), ...(step.waits ?? [])].filter((t) => !reads.has(t)) }).toEqual({ step: step.decision, extra: [] });
      if (step.inline?.length) expect({ step: step.decision, consumer: step.consumer !== undefined }).toEqual({ step: step.decision, consumer: true });
    }
  });

  it('the README of libs/call-life carries the route table generated from the data', () => {
    const readme = readFileSync(path.join(__dirname, '../../../call-life/README.md'), 'utf8');
    expect(readme).toContain(routeTable());
  });
});
