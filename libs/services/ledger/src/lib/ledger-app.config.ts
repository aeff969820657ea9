import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, type ConfigBase, EnvVar } from '@tollgate/config';
import { type LedgerOptions } from './ledger.options';

/** How long the ledger gathers events before projecting them, shared by the ledger app's config and the embedded host's. */
export function WithLedgerLingerConfig<B extends ConfigBase>(Base: B) {
  class LedgerLingerConfig extends Base {
    @EnvVar({ description: 'How long (ms) the ledger gathers events before applying them in one transaction (off the critical path: more events per transaction, facts a little later).' })
    @IsInt() @Min(0) @Max(5_000)
    LEDGER_LINGER_MS = 200;
  }
  return LedgerLingerConfig;
}

/** Every variable the ledger app reads, validated at boot. */
export class LedgerAppConfig extends WithLedgerLingerConfig(CommonConfig) {
  @EnvVar({ description: 'HTTP port of the ledger app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3005;

  @EnvVar({ description: 'Bearer token of the ledger admin API (issues finance tokens; also reads the finance API as an operator), at least 16 characters; unset: the admin API refuses every call.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  LEDGER_ADMIN_TOKEN?: string;

  toOptions(): LedgerOptions {
    return { databaseUrl: this.DATABASE_URL, outboxPollIntervalMs: this.OUTBOX_POLL_INTERVAL_MS, lingerMs: this.LEDGER_LINGER_MS, ...(this.LEDGER_ADMIN_TOKEN ? { adminToken: this.LEDGER_ADMIN_TOKEN } : {}) };
  }
}
