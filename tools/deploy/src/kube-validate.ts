/**
 * Checks Kubernetes manifests against the Kubernetes API's own schemas, in a process of its own: reads a JSON array of
 * manifests on stdin, prints a JSON array of problems. Two libraries, two kinds of mistake:
 *   - `kubernetes-models` (the API's OpenAPI schemas, compiled): wrong types, missing required fields, bad enums;
 *   - `@kubernetes/client-node`'s serializer, round-tripped: a field the API does not have is dropped on the way, so
 *     any path the input has and the round trip lacks is an unknown (misspelt or misplaced) field.
 * Both ship ES modules only, which jest's runtime cannot load, hence the separate process (`validateManifests`).
 */
interface Manifest { apiVersion: string; kind: string; metadata?: { name?: string } }
type Model = new (data: unknown) => { validate(): void };
interface Serializer { deserialize(data: unknown, type: string): unknown; serialize(data: unknown, type: string): unknown }

// A real `import()` (the TypeScript loader would turn a written one into `require`, which these packages refuse).
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<Record<string, unknown>>;

function modelPath(m: Manifest): string {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${m.apiVersion}/${m.kind}`;
  return group ? `kubernetes-models/${group}/${version}/${m.kind}` : `kubernetes-models/${version}/${m.kind}`;
}

/** Paths present in `input` and absent from `output`. */
function dropped(input: unknown, output: unknown, at: string): string[] {
  if (Array.isArray(input)) return input.flatMap((v, i) => dropped(v, Array.isArray(output) ? output[i] : undefined, `${at}[${i}]`));
  if (input === null || typeof input !== 'object') return [];
  const out = (output ?? {}) as Record<string, unknown>;
  return Object.entries(input as Record<string, unknown>).flatMap(([k, v]) => (k in out ? dropped(v, out[k], `${at}.${k}`) : [`${at}.${k}`]));
}

async function problemsOf(m: Manifest, serializer: Serializer): Promise<string[]> {
  const id = `${m.kind}/${m.metadata?.name ?? '?'}`;
  const problems: string[] = [];
  try {
    const Kind = (await importEsm(modelPath(m)))[m.kind] as Model;
    new Kind(m).validate();
  } catch (e) {
    problems.push(`${id}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!m.apiVersion.startsWith('monitoring.coreos.com/')) {
    const type = `${m.apiVersion.split('/').pop()!.replace(/^v/, 'V')}${m.kind}`;
    const back = serializer.serialize(serializer.deserialize(m, type), type);
    problems.push(...dropped(m, back, '').map((p) => `${id}: unknown field ${p.slice(1)}`));
  }
  return problems;
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const manifests = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest[];
  const serializer = (await importEsm('@kubernetes/client-node/dist/serializer.js'))['ObjectSerializer'] as Serializer;
  const problems = (await Promise.all(manifests.map((m) => problemsOf(m, serializer)))).flat();
  process.stdout.write(JSON.stringify(problems));
}

void main();
