/**
 * One connection model for every tollgate-ops command. `--embedded` (with `--data-dir <dir>`,
 * default `./data`) reads what `npm start` wrote to `<dir>/demo.json` — the host's URL, the admin token, the operator
 * token, the embedded PostgreSQL — and makes them the defaults of every command's connection flags, which still win
 * when given. Without `--embedded`, the same happens by itself when `./data/demo.json` exists and no service URL or
 * DATABASE_URL is set in the environment: the defaults work with `npm start`. Otherwise the defaults are the
 * distributed ports. Imported first by tollgate-ops: the commands read these defaults when they are built.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface DemoFile { adminToken?: string; operatorToken?: string; financeToken?: string; consoleUrl?: string; mcpUrl?: string; databaseUrl?: string }

const DISTRIBUTED_VARS = ['DATABASE_URL', 'LEDGER_URL', 'EXECUTION_URL', 'PAYMENT_URL', 'SETTLEMENT_URL', 'DISCOVERY_URL', 'KAFKA_BROKERS'];

/** `--embedded` / `--data-dir <dir>` from the command line (both removed from it: the commands never see them). */
export function takeEmbeddedFlags(argv: string[]): { embedded: boolean; dataDir?: string } {
  let embedded = false;
  let dataDir: string | undefined;
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--embedded') {
      embedded = true;
      argv.splice(i--, 1);
    } else if (argv[i] === '--data-dir' && argv[i + 1] !== undefined) {
      dataDir = argv[i + 1];
      argv.splice(i--, 2);
    } else if (argv[i]!.startsWith('--data-dir=')) {
      dataDir = argv[i]!.slice('--data-dir='.length);
      argv.splice(i--, 1);
    }
  }
  return { embedded: embedded || dataDir !== undefined, ...(dataDir !== undefined ? { dataDir } : {}) };
}

/** The environment defaults an embedded host's demo.json gives (only variables not already set). */
export function embeddedDefaults(demo: DemoFile, env: NodeJS.ProcessEnv): Record<string, string> {
  const base = new URL(demo.consoleUrl ?? demo.mcpUrl ?? 'http://127.0.0.1:3000').origin;
  const admin = demo.adminToken ?? '';
  const wanted: Record<string, string | undefined> = {
    LEDGER_URL: base, EXECUTION_URL: base, PAYMENT_URL: base, SETTLEMENT_URL: base, DISCOVERY_URL: base,
    ADMIN_TOKEN: admin, EXECUTION_ADMIN_TOKEN: admin, DISCOVERY_ADMIN_TOKEN: admin, LEDGER_ADMIN_TOKEN: admin,
    LEDGER_TOKEN: demo.operatorToken ?? demo.financeToken ?? admin,
    DATABASE_URL: demo.databaseUrl, KAFKA_BROKERS: 'embedded',
  };
  return Object.fromEntries(Object.entries(wanted).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '' && env[e[0]] === undefined));
}

function apply(argv: string[], env: NodeJS.ProcessEnv): void {
  const flags = takeEmbeddedFlags(argv);
  const file = path.resolve(flags.dataDir ?? 'data', 'demo.json');
  const automatic = !flags.embedded && existsSync(file) && DISTRIBUTED_VARS.every((v) => env[v] === undefined && env[`${v}_FILE`] === undefined);
  if (!flags.embedded && !automatic) return;
  if (!existsSync(file)) throw new Error(`--embedded: ${file} does not exist (start the embedded host with npm start, or give --data-dir)`);
  Object.assign(env, embeddedDefaults(JSON.parse(readFileSync(file, 'utf8')) as DemoFile, env));
}

apply(process.argv, process.env);
