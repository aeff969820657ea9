import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';
import { type LedgerOptions } from './ledger.options';

/** Every variable the ledger app reads, validated at boot. */
export class LedgerAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the ledger app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3005;

  @EnvVar({ description: 'Bearer token of the ledger admin API (issues finance tokens; also reads the finance API as an operator), at least 16 characters; unset: the admin API refuses every call.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  LEDGER_ADMIN_TOKEN?: string;

  toOptions(): LedgerOptions {
    return { databaseUrl: this.DATABASE_URL, outboxPollIntervalMs: this.OUTBOX_POLL_INTERVAL_MS, ...(this.LEDGER_ADMIN_TOKEN ? { adminToken: this.LEDGER_ADMIN_TOKEN } : {}) };
  }
}
