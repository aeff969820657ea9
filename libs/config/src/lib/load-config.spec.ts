import { IsInt, IsString, Min, MinLength } from 'class-validator';
import { EnvVar } from './env-var.decorator';
import { ConfigError, envExampleFor, loadConfig } from './load-config';
import { CommonConfig } from './common.config';

class SampleConfig extends CommonConfig {
  @EnvVar({ description: 'Port.' }) @IsInt() @Min(1) PORT = 3000;
  @EnvVar({ description: 'Admin token.', secret: true }) @IsString() @MinLength(16) ADMIN_TOKEN!: string;
}

describe('loadConfig (validated at boot)', () => {
  it('applies defaults and converts numbers', () => {
    const c = loadConfig(SampleConfig, { PORT: '8080', ADMIN_TOKEN: 'x'.repeat(16) });
    expect(c.PORT).toBe(8080);
    expect(c.KAFKA_BROKERS).toBe('127.0.0.1:9092');
  });

  it('lists every bad variable and never prints a secret', () => {
    let error: unknown;
    try {
      loadConfig(SampleConfig, { PORT: 'abc', ADMIN_TOKEN: 'short-secret', KAFKA_BROKERS: 'nope' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/KAFKA_BROKERS/);
    expect(problems).toMatch(/ADMIN_TOKEN=\(secret\)/);
    expect(problems).not.toContain('short-secret');
  });

  it('documents every variable in .env.example, secrets left blank', () => {
    const text = envExampleFor('sample', SampleConfig);
    expect(text).toContain('PORT=3000');
    expect(text).toContain('ADMIN_TOKEN=\n');
    expect(text).toContain('# PostgreSQL connection URL');
  });
});
