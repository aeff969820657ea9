import { IsIn, IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { EnvVar } from '@tollgate/config';

/** The sample providers: upstream MCP servers for demos and tests, on a loopback port behind a token. */
export class SampleProvidersConfig {
  @EnvVar({ description: 'HTTP port of the sample providers.' }) @IsInt() @Min(1) @Max(65535) PORT = 3100;
  @EnvVar({ description: 'Address the sample providers bind to: loopback, or every interface ("0.0.0.0") inside a container network whose port is never published; every request needs the token either way.' })
  @IsIn(['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::']) HOST = '127.0.0.1';
  @EnvVar({ description: 'Bearer token every request to the sample providers must carry (at least 16 characters); give it to discovery and execution in UPSTREAM_CREDENTIALS.', secret: true, type: 'string' })
  @IsString() @MinLength(16)
  SAMPLE_PROVIDERS_TOKEN!: string;
  @EnvVar({ description: 'Sessions of the session-keeping sample provider open at once.' }) @IsInt() @Min(1) @Max(10_000) SAMPLE_PROVIDERS_MAX_SESSIONS = 64;
  @EnvVar({ description: 'A sample-provider session without a request for this long (ms) is closed.' }) @IsInt() @Min(1000) SAMPLE_PROVIDERS_SESSION_IDLE_MS = 300_000;
}
