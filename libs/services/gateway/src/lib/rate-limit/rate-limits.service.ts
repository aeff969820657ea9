import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { col, defineTable } from '@tollgate/persistence';
import { GATEWAY } from '../gateway.constants';
import { msUntilNextUtcMinute } from './minute-window';

/** `gateway.rate_limit`: rate-limiter-flexible's own counters (the library writes and reads it; declared to be checked). */
export const RATE_LIMIT = defineTable('gateway.rate_limit', { key: col.varchar().required(), points: col.integer().required(), expire: col.bigint().nullable() });

/** The limits of source 000 (G3.10, G4, G9), each per fixed UTC minute. */
export const LIMITS = {
  /** search_tools: per agent, across URLs. */
  search: 30,
  /** get_tool: per agent, across URLs. */
  read: 120,
  /** tools/list: per credential and URL. */
  list: 60,
  /** Refused tool calls: per agent. */
  rejected: 60,
  /** Failed credential attempts per client address (across URLs), before MCP_AUTH_RATE_LIMITED. */
  authFailures: 20,
  /** Failed attempts with one presented secret (from any address), before MCP_AUTH_RATE_LIMITED. */
  authFailuresPerSecret: 10,
  /** Device sign-ins started per client address. */
  signIns: 10,
  /** OAuth authorization requests per client address. */
  oauthAuthorize: 30,
  /** OAuth dynamic client registrations per client address. */
  oauthRegister: 10,
  /** OAuth token and revocation requests per client address and client. */
  oauthToken: 60,
} as const;
export type LimitName = keyof typeof LIMITS;

export type LimitOutcome = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

/**
 * Fixed-window counters shared by every gateway instance, kept in
 * PostgreSQL by rate-limiter-flexible (atomic upsert per key). The library's
 * windows start at a key's first hit, so the key carries the UTC minute:
 * each minute is a fresh key, which makes the windows the fixed UTC minutes
 * the spec asks for.
 */
@Injectable()
export class RateLimits implements OnModuleInit {
  private limiters?: Record<LimitName, RateLimiterPostgres>;

  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    // TypeORM's pg driver keeps its pool as `master`; the limiter shares it.
    const pool = (this.dataSource.driver as unknown as { master: Pool }).master;
    const make = (name: LimitName) =>
      new RateLimiterPostgres({
        storeClient: pool, storeType: 'pool', schemaName: GATEWAY, tableName: 'rate_limit', tableCreated: true,
        keyPrefix: name, points: LIMITS[name], duration: 120, clearExpiredByTimeout: name === 'search',
      });
    this.limiters = Object.fromEntries((Object.keys(LIMITS) as LimitName[]).map((name) => [name, make(name)])) as Record<LimitName, RateLimiterPostgres>;
  }

  /** Counts one hit; refused once the minute's allowance is used up. */
  async consume(name: LimitName, subject: string, now = Date.now()): Promise<LimitOutcome> {
    try {
      const res = await this.limiters![name].consume(this.key(subject, now));
      return { ok: true, remaining: res.remainingPoints };
    } catch (e) {
      if (e instanceof RateLimiterRes) return { ok: false, retryAfterMs: msUntilNextUtcMinute(now) };
      throw e;
    }
  }

  /** Whether the allowance is already used up, without counting a hit. */
  async exhausted(name: LimitName, subject: string, now = Date.now()): Promise<LimitOutcome> {
    const res = await this.limiters![name].get(this.key(subject, now));
    return res && res.consumedPoints >= LIMITS[name] ? { ok: false, retryAfterMs: msUntilNextUtcMinute(now) } : { ok: true, remaining: LIMITS[name] - (res?.consumedPoints ?? 0) };
  }

  private key(subject: string, now: number): string {
    return `${subject}:${Math.floor(now / 60_000)}`;
  }
}
