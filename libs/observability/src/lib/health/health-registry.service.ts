import { Injectable } from '@nestjs/common';

/** One dependency whose readiness the service reports (a database, the broker). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

/** A figure the readiness answer reports without deciding readiness on it (e.g. parked events). */
export interface ReadinessFigure {
  name: string;
  read(): Promise<number>;
}

/** A state the readiness answer reports in words (e.g. how search ranks), without deciding readiness on it. */
export interface ReadinessStatus {
  name: string;
  read(): string;
}

export interface Readiness { ready: boolean; checks: Record<string, boolean>; figures: Record<string, number | null>; statuses: Record<string, string> }

/**
 * How long one check or figure may take before it counts as failed (unknown): a database whose packets are dropped
 * leaves a query waiting for minutes, and a probe must still answer "not ready" at once.
 */
export const CHECK_TIMEOUT_MS = 2_000;

/** `p`'s value, or `fallback` once it failed or took longer than `ms`. */
function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([p.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

/** Collects readiness checks from every service module hosted in this process. */
@Injectable()
export class HealthRegistry {
  private readonly checks: ReadinessCheck[] = [];
  private readonly figures: ReadinessFigure[] = [];
  private readonly statuses: ReadinessStatus[] = [];

  register(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  registerFigure(figure: ReadinessFigure): void {
    this.figures.push(figure);
  }

  registerStatus(status: ReadinessStatus): void {
    this.statuses.push(status);
  }

  async evaluate(): Promise<Readiness> {
    const [results, figures] = await Promise.all([
      Promise.all(this.checks.map(async (c) => [c.name, await within(c.check(), CHECK_TIMEOUT_MS, false)] as const)),
      Promise.all(this.figures.map(async (f) => [f.name, await within<number | null>(f.read(), CHECK_TIMEOUT_MS, null)] as const)),
    ]);
    const statuses = Object.fromEntries(this.statuses.map((s) => [s.name, s.read()]));
    return { ready: results.length > 0 && results.every(([, ok]) => ok), checks: Object.fromEntries(results), figures: Object.fromEntries(figures), statuses };
  }
}
