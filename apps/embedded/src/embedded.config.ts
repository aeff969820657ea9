import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { EnvVar } from '@tollgate/config';
import { WithMppConfig, WithX402Config } from '@tollgate/payment-service';
import { WithReconcilerConfig } from '@tollgate/execution-service';
import { WithCallDeadlineConfig, WithOAuthConfig } from '@tollgate/gateway-service';
import { WithLedgerLingerConfig } from '@tollgate/ledger-service';
import { UPSTREAM_CREDENTIALS_DESCRIPTION, UPSTREAM_CREDENTIALS_PATTERN } from '@tollgate/mcp-runtime';

/** `npm start`: the whole system in one process (the x402, reconciler, call-deadline and ledger-linger settings are the services' own). Every variable is optional (x402's become required once a facilitator is set). */
export class EmbeddedConfig extends WithOAuthConfig(WithLedgerLingerConfig(WithCallDeadlineConfig(WithReconcilerConfig(WithX402Config(WithMppConfig(class {})))))) {
  @EnvVar({ description: 'HTTP port for the gateway, admin APIs, ledger and sample providers.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3000;

  @EnvVar({ description: 'Address the HTTP server binds to.' })
  @IsString()
  HOST = '127.0.0.1';

  @EnvVar({ description: 'Folder for the embedded PostgreSQL data and demo.json.' })
  @IsString()
  DATA_DIR = './data';

  @EnvVar({ description: 'Port of the embedded PostgreSQL engine.' })
  @IsInt() @Min(1) @Max(65535)
  EMBEDDED_PG_PORT = 54329;

  @EnvVar({ description: 'Seed the demo money at the first start: a funded demo wallet, priced tools beside the free ones, a search-mode URL and a finance token for the console (false: identities only).' })
  @IsBoolean()
  DEMO_MONEY = true;

  @EnvVar({ description: 'Use this PostgreSQL instead of the embedded engine (optional).', type: 'string' })
  @IsOptional() @Matches(/^postgres(ql)?:\/\//)
  DATABASE_URL?: string;

  @EnvVar({ description: 'Verification window (ms) before a confirmed call is settled.' })
  @IsInt() @Min(0)
  SETTLEMENT_VERIFICATION_WINDOW_MS = 2000;

  @EnvVar({ description: 'How long (ms) a device sign-in of the local bridge stays open for approval.' })
  @IsInt() @Min(1000)
  GATEWAY_SIGNIN_TTL_MS = 600_000;

  @EnvVar({ description: 'Proxies trusted to state the client address in X-Forwarded-For (comma-separated addresses, CIDRs, or loopback / linklocal / uniquelocal); empty: none.', example: '' })
  @Matches(/^[0-9A-Za-z.:/,\s]*$/)
  GATEWAY_TRUSTED_PROXIES = '';

  @EnvVar({ description: 'Hostnames (comma-separated; no scheme or port, IPv6 in brackets) allowed in the Host and Origin headers of the MCP and sign-in routes (DNS-rebinding protection). Empty: localhost-class names when bound to loopback; otherwise Host is not checked and a browser Origin of another site than the Host is refused.', example: 'gateway.example.com' })
  @Matches(/^[0-9A-Za-z.:[\]\-,\s]*$/, { message: 'must be a comma-separated list of hostnames' })
  GATEWAY_ALLOWED_HOSTS = '';

  @EnvVar({ description: 'A connection must deliver a complete request head within this many ms, or it is closed (idle and slow clients).' })
  @IsInt() @Min(500) @Max(120_000)
  HTTP_REQUEST_HEAD_TIMEOUT_MS = 10_000;

  @EnvVar({ description: 'Loopback port of the sample providers (behind a token only this process knows); 0: any free port.' })
  @IsInt() @Min(0) @Max(65535)
  SAMPLE_PROVIDERS_PORT = 0;

  @EnvVar({ description: UPSTREAM_CREDENTIALS_DESCRIPTION, secret: true, example: '' })
  @Matches(UPSTREAM_CREDENTIALS_PATTERN, { message: 'must be origin=token[,origin=token...] with tokens of at least 16 characters' })
  UPSTREAM_CREDENTIALS = '';

  @EnvVar({ description: 'Bearer token a scrape of /metrics must send (at least 16 characters); unset: one is generated at the first start and kept in demo.json.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  METRICS_TOKEN?: string;

  @EnvVar({ description: 'Serve /metrics to anyone without a token (only behind a network that keeps strangers out).' })
  @IsBoolean()
  METRICS_OPEN = false;

  @EnvVar({ description: 'Log level: fatal, error, warn, info, debug or trace.' })
  @IsString()
  LOG_LEVEL = 'info';

  @EnvVar({ description: 'Log lines: pretty (readable, one line each) or json (one object per line). Unset: pretty on a terminal, json otherwise.', type: 'string', example: '' })
  @IsOptional() @IsIn(['pretty', 'json'])
  LOG_FORMAT?: 'pretty' | 'json';

  @EnvVar({ description: 'How search_tools ranks: hybrid (meaning and words; words only while the model is unavailable), lexical, or dense (evaluation baseline).' })
  @IsIn(['hybrid', 'lexical', 'dense'])
  GATEWAY_SEARCH_RANKING: 'hybrid' | 'lexical' | 'dense' = 'hybrid';

  @EnvVar({ description: 'Folder holding the sentence-embedding model and its tokenizer (infra/models/model.sh fetch, run by npm ci, puts them there).' })
  @IsString()
  GATEWAY_SEARCH_MODEL_DIR = 'infra/models/.data/all-minilm-l6-v2-q';
}
