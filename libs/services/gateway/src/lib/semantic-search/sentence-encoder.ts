import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Tokenizer as TokenizerClass } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };
import * as ort from 'onnxruntime-node';

// The package ships a CommonJS build for Node (its `node.require` export) but declares its types as ESM only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tokenizer } = require('@huggingface/tokenizers') as { Tokenizer: typeof TokenizerClass };
type Tokenizer = TokenizerClass;

/** The model search_tools ranks with: all-MiniLM-L6-v2, quantized, from LangChain4j's jar (infra/models/model.sh). */
export const MODEL_FILE = 'all-minilm-l6-v2-q.onnx';
export const TOKENIZER_FILE = 'all-minilm-l6-v2-q-tokenizer.json';
/** SHA-256 of the files the project pins (infra/models/model.sha256): anything else is refused at load. */
export const MODEL_SHA256 = 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1';
export const TOKENIZER_SHA256 = 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0';
/** Longer texts are cut: a tool's name, summary and the start of its description say what it does. */
export const MAX_TOKENS = 128;
export const DIMENSIONS = 384;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Sentence embeddings in process (onnxruntime-node on the CPU): WordPiece tokens, the transformer, mean pooling over
 * the real tokens, L2-normalised — so a dot product is the cosine similarity.
 */
export class SentenceEncoder {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    readonly modelSha256: string,
  ) {}

  /** Loads and checks the model; throws (with a reason fit for a log line) when it is missing or not the pinned one. */
  static async load(dir: string, threads = 1): Promise<SentenceEncoder> {
    const [model, tokenizerJson] = await Promise.all([readFile(path.join(dir, MODEL_FILE)), readFile(path.join(dir, TOKENIZER_FILE))]);
    if (sha256(model) !== MODEL_SHA256) throw new Error(`${MODEL_FILE} does not match its pinned SHA-256`);
    if (sha256(tokenizerJson) !== TOKENIZER_SHA256) throw new Error(`${TOKENIZER_FILE} does not match its pinned SHA-256`);
    const session = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    const tokenizer = new Tokenizer(JSON.parse(tokenizerJson.toString('utf8')), {});
    return new SentenceEncoder(session, tokenizer, MODEL_SHA256);
  }

  /**
   * One unit vector per text, each text run alone. The model is dynamically quantized: its activation scales are
   * computed over the whole input tensor, so a text's vector shifts with whatever shares its batch (measured: ±3 points
   * of top-3 on the evaluation). Alone, a text always gets the same vector — rankings are reproducible across
   * restarts, replicas and catalog sizes.
   */
  async embedEach(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const t of texts) out.push((await this.embed([t]))[0]!);
    return out;
  }

  /** One unit vector per text, run as one padded batch (faster; see `embedEach` for why search does not use it). */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const encoded = texts.map((t) => this.tokenizer.encode(t).ids.slice(0, MAX_TOKENS));
    const width = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(texts.length * width);
    const mask = new BigInt64Array(texts.length * width);
    encoded.forEach((row, r) => row.forEach((id: number, c: number) => {
      ids[r * width + c] = BigInt(id);
      mask[r * width + c] = 1n;
    }));
    const dims = [texts.length, width];
    const feeds: Record<string, ort.Tensor> = { input_ids: new ort.Tensor('int64', ids, dims), attention_mask: new ort.Tensor('int64', mask, dims) };
    if (this.session.inputNames.includes('token_type_ids')) feeds['token_type_ids'] = new ort.Tensor('int64', new BigInt64Array(texts.length * width), dims);
    const out = await this.session.run(feeds);
    const hidden = out[this.session.outputNames[0]!]!.data as Float32Array;
    return encoded.map((row, r) => meanPooled(hidden, r, width, row.length));
  }
}

/** The mean of the first `tokens` hidden states of row `r`, scaled to unit length. */
export function meanPooled(hidden: Float32Array, r: number, width: number, tokens: number): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  for (let t = 0; t < tokens; t++) {
    const at = (r * width + t) * DIMENSIONS;
    for (let d = 0; d < DIMENSIONS; d++) v[d]! += hidden[at + d]!;
  }
  let norm = 0;
  for (let d = 0; d < DIMENSIONS; d++) norm += v[d]! * v[d]!;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let d = 0; d < DIMENSIONS; d++) v[d]! *= scale;
  return v;
}
