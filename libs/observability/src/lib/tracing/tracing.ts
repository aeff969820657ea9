import { context, type Context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * Distributed tracing, OpenTelemetry. Off by default: it starts only when the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) names a collector, and exports spans there by
 * OTLP/HTTP. One call is one trace: the W3C `traceparent` of the MCP request (or a new root) is the parent of the
 * gateway's span, every event written inside a span carries the span's context in its headers (`traceHeaders`), and
 * each consumer handles an event inside a child span of the context its headers carry (`inConsumerSpan`).
 */
let provider: NodeTracerProvider | undefined;

const TRACER = 'tollgate';

export interface TracingSettings {
  service: string;
  /** The OTLP/HTTP traces URL; default from the standard OTEL_EXPORTER_OTLP_* variables. Unset: tracing is off. */
  tracesUrl?: string;
}

/** The traces URL the standard variables name, validated (a bad URL fails the boot); undefined when tracing is off. */
export function tracesUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const url = traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (url === undefined) return undefined;
  const parsed = new URL(url); // throws on a malformed URL: refused at boot
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`OTEL_EXPORTER_OTLP endpoint must be http(s): ${url}`);
  return url;
}

/** Starts the tracer provider once per process (the embedded host's services share it). Returns whether tracing is on. */
export function startTracing(settings: TracingSettings): boolean {
  if (provider) return true;
  const url = settings.tracesUrl ?? tracesUrlFromEnv();
  if (!url) return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 500 })],
  });
  provider.register(); // AsyncLocalStorage context, W3C trace-context and baggage propagation
  return true;
}

/** Flushes and stops tracing (at shutdown, so the last spans are exported). */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}

/** The active context's W3C headers (`traceparent`, `tracestate`) — empty when there is no recording span. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The context W3C headers carry (an event's, an HTTP request's), or the active one when they carry none. */
export function contextOf(headers: Record<string, string | string[] | undefined> | undefined): Context {
  return headers ? propagation.extract(context.active(), headers) : context.active();
}

/** Runs `fn` in a new span that is a child of `parent`, recording an exception and ending the span when it settles. */
export async function inSpan<T>(name: string, kind: SpanKind, parent: Context, attributes: Record<string, string>, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = trace.getTracer(TRACER).startSpan(name, { kind, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw e;
  } finally {
    span.end();
  }
}

/** A consumer's handling of one event, as a child of the span that wrote it (its headers' context). */
export function inConsumerSpan<T>(consumer: string, topic: string, headers: Record<string, string> | undefined, intentId: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!provider) return fn(); // tracing off: nothing on the hot path
  const attributes = { 'messaging.destination.name': topic, 'messaging.consumer.group.name': consumer, 'messaging.operation.type': 'process', ...(intentId ? { 'tollgate.intent_id': intentId } : {}) };
  return inSpan(`${topic} process`, SpanKind.CONSUMER, contextOf(headers), attributes, fn);
}

export { SpanKind };

/** Whether spans are being recorded (tracing started). */
export function tracingOn(): boolean {
  return provider !== undefined;
}

/**
 * An HTTP request's server span (when tracing is on), a child of the W3C context its headers carry: `run` handles the
 * request inside it, `end` closes it with the response status.
 */
export function httpServerSpan(method: string, path: string, headers: Record<string, string | string[] | undefined>): { run(fn: () => void): void; end(status: number): void } {
  const parent = contextOf(headers);
  const span = trace.getTracer(TRACER).startSpan(`HTTP ${method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
  return {
    run: (fn) => context.with(trace.setSpan(parent, span), fn),
    end: (status) => {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}

/** `fn` bound to the active context: work scheduled now and run later (after a commit) continues the same trace. */
export function bindToActiveContext<F extends (...args: never[]) => unknown>(fn: F): F {
  return provider ? context.bind(context.active(), fn) : fn;
}

/**
 * Work done later on behalf of an earlier span (a sweeper closing a call's verification window): a child span of the
 * context that work recorded with `traceHeaders()`, so the call's trace goes on.
 */
export function inRecordedContext<T>(name: string, headers: Record<string, string> | null | undefined, intentId: string, fn: () => Promise<T>): Promise<T> {
  if (!provider || !headers) return fn();
  return inSpan(name, SpanKind.INTERNAL, contextOf(headers), { 'tollgate.intent_id': intentId }, fn);
}
