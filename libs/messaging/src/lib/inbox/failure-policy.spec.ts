import { connect } from 'node:net';
import fc from 'fast-check';
import { Client, DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { failureKind, isTransientFailure, retryDelayMs } from './failure-policy';

/** A server error exactly as pg raises it (pg-protocol's DatabaseError with its SQLSTATE). */
function pgError(code: string, message = 'x'): DatabaseError {
  const e = new DatabaseError(message, message.length, 'error');
  e.code = code;
  return e;
}
/** The same error as TypeORM hands it to a handler's caller. */
const viaTypeorm = (e: Error) => new QueryFailedError('SELECT 1', [], e);
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
};
/** A refused TCP connection, as Node raises it (nothing listens on port 1 of loopback). */
const refused = () => new Promise<unknown>((resolve) => connect({ host: '127.0.0.1', port: 1 }).on('error', resolve));

const TRANSIENT = ['08000', '08003', '08006', '08001', '08004', '08P01', '53300', '57P01', '57P02', '57P03', '40001', '40P01'];
/** SQLSTATEs the issue names as wrongly retried forever before (statement timeout, query cancelled, out of memory, disk full…). */
const DETERMINISTIC = ['57014', '57000', '53100', '53200', '53400', '22003', '23505', '23514', '22P02', 'P0001', '42P01', '25P02', '55P03'];

/** Which failures may park an event, and how long a failing event is retried. */
describe('failure policy', () => {
  it('connection lost, server shutting down, serialization/deadlock: transient, also wrapped by TypeORM', () => {
    for (const code of TRANSIENT) {
      expect(failureKind(pgError(code))).toBe('transient');
      expect(failureKind(viaTypeorm(pgError(code)))).toBe('transient');
    }
    expect(isTransientFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransientFailure(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('everything else is the event\'s: statement timeout, cancel, resources, constraints, bad input (bounded, then parked)', () => {
    for (const code of DETERMINISTIC) {
      expect(failureKind(pgError(code))).toBe('deterministic');
      expect(failureKind(viaTypeorm(pgError(code)))).toBe('deterministic');
    }
    expect(isTransientFailure(new RangeError('amount out of range'))).toBe(false);
    expect(isTransientFailure(undefined)).toBe(false);
    expect(isTransientFailure('Connection terminated')).toBe(false);
  });

  it("Node's own ERR_* errors (thrown for real) are deterministic, not retried forever", () => {
    const errors = [
      thrown(() => new URL('not a url')),
      thrown(() => Buffer.alloc(-1)),
      thrown(() => Buffer.from({} as unknown as string)),
      thrown(() => 'x'.repeat(-1)),
    ];
    expect((errors[0] as { code: string }).code).toBe('ERR_INVALID_URL');
    expect((errors[1] as { code: string }).code).toBe('ERR_OUT_OF_RANGE');
    expect((errors[2] as { code: string }).code).toBe('ERR_INVALID_ARG_TYPE');
    for (const e of errors) expect(failureKind(e)).toBe('deterministic');
  });

  it('a real refused socket and a real refused pg connection are transient', async () => {
    const socket = await refused();
    expect((socket as { code: string }).code).toBe('ECONNREFUSED');
    expect(failureKind(socket)).toBe('transient');
    const client = new Client({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 2000 });
    const pg = await client.connect().then(() => undefined, (e: unknown) => e);
    expect(pg).toBeDefined();
    expect(failureKind(pg)).toBe('transient');
  });

  it('property: a SQLSTATE is transient exactly when it is of class 08 or one of the shutdown/race/too-many-connections codes', () => {
    const sqlstate = fc.tuple(fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('')), fc.constantFrom(...'0123456789P'.split('')),
      fc.string({ unit: fc.constantFrom(...'0123456789ABP'.split('')), minLength: 3, maxLength: 3 })).map(([a, b, rest]) => `${a}${b}${rest}`);
    fc.assert(fc.property(sqlstate, fc.boolean(), (code, wrapped) => {
      const e = wrapped ? viaTypeorm(pgError(code)) : pgError(code);
      const expected = code.startsWith('08') || TRANSIENT.includes(code);
      return isTransientFailure(e) === expected;
    }), { numRuns: 2000 });
  });

  it('property: a Node error code is transient only when it is a socket-level one', () => {
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ_'.split('')), minLength: 1, maxLength: 20 }), (tail) => {
      const e = Object.assign(new Error('x'), { code: `ERR_${tail}` });
      return !isTransientFailure(e);
    }));
  });

  it('backs off from 100 ms, doubling, never above 2 s', () => {
    expect([2, 3, 4, 5, 6, 7].map(retryDelayMs)).toEqual([100, 200, 400, 800, 1600, 2000]);
    fc.assert(fc.property(fc.integer({ min: 2, max: 1000 }), (a) => retryDelayMs(a + 1) >= retryDelayMs(a) && retryDelayMs(a) <= 2000));
  });
});
