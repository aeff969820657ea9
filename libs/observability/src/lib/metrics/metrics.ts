import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics, one registry per process (embedded mode hosts every service
 * in one): prom-client's defaults (CPU, memory, event loop lag, GC), HTTP request latency, calls by outcome, and every
 * readiness figure (parked events, tools embedded…) as a gauge, read when scraped.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'tollgate_' });

export const httpRequestSeconds = new Histogram({
  name: 'tollgate_http_request_duration_seconds', help: 'HTTP requests by method, route and status class.',
  labelNames: ['method', 'route', 'status'] as const, buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

export const callsTotal = new Counter({
  name: 'tollgate_calls_total', help: 'Tool calls answered by the gateway, by outcome (ok, refused, failed, unknown) and refusal code.',
  labelNames: ['outcome', 'code'] as const, registers: [metricsRegistry],
});

export const callSeconds = new Histogram({
  name: 'tollgate_call_duration_seconds', help: 'Time from a tool call\'s arrival at the gateway to its answer, by outcome.',
  labelNames: ['outcome'] as const, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 35],
  registers: [metricsRegistry],
});

/** A readiness figure as a gauge: `gateway.search.toolsEmbedded` → tollgate_figure{name="gateway.search.toolsEmbedded"}. */
export const figureGauge = new Gauge({ name: 'tollgate_figure', help: 'Readiness figures (parked events per service, tools embedded…).', labelNames: ['name'] as const, registers: [metricsRegistry] });

/**
 * Per stage of a call's life: each consumer's handling of each event type. `age` is the time from
 * the event's production to its handling (broker or log delivery, batching, queueing); `duration` the handler itself.
 */
export const eventAgeSeconds = new Histogram({
  name: 'tollgate_event_age_seconds', help: 'Time from an event\'s production to its handling, by consumer and event type.',
  labelNames: ['consumer', 'type'] as const, buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
  registers: [metricsRegistry],
});

export const eventHandleSeconds = new Histogram({
  name: 'tollgate_event_handle_duration_seconds', help: 'Time a consumer\'s handler took for one event, by consumer and event type.',
  labelNames: ['consumer', 'type'] as const, buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [metricsRegistry],
});
