import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

  it('reads NAME_FILE as NAME (a mounted secret), one trailing newline dropped; refuses both, or an unreadable file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'config-'));
    writeFileSync(path.join(dir, 'admin'), `${'s'.repeat(20)}\n`);
    writeFileSync(path.join(dir, 'port'), '8081');
    const c = loadConfig(SampleConfig, { ADMIN_TOKEN_FILE: path.join(dir, 'admin'), PORT_FILE: path.join(dir, 'port') });
    expect(c.ADMIN_TOKEN).toBe('s'.repeat(20));
    expect(c.PORT).toBe(8081);
    const problemsOf = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(SampleConfig, env);
      } catch (e) {
        return (e as ConfigError).problems;
      }
      return [];
    };
    expect(problemsOf({ ADMIN_TOKEN: 'x'.repeat(16), ADMIN_TOKEN_FILE: path.join(dir, 'admin') })).toEqual(['ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set: keep one', expect.stringMatching(/^ADMIN_TOKEN=\(secret\)/)]);
    expect(problemsOf({ ADMIN_TOKEN_FILE: path.join(dir, 'missing') })).toEqual([`ADMIN_TOKEN_FILE=${JSON.stringify(path.join(dir, 'missing'))}: cannot be read (ENOENT)`, expect.stringMatching(/^ADMIN_TOKEN=/)]);
  });

  it('documents every variable in .env.example, secrets left blank', () => {
    const text = envExampleFor('sample', SampleConfig);
    expect(text).toContain('PORT=3000');
    expect(text).toContain('ADMIN_TOKEN=\n');
    expect(text).toContain('# PostgreSQL connection URL');
  });
});
