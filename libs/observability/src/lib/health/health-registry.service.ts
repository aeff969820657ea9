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
    const results = await Promise.all(
      this.checks.map(async (c) => [c.name, await c.check().catch(() => false)] as const),
    );
    const figures = await Promise.all(this.figures.map(async (f) => [f.name, await f.read().catch(() => null)] as const));
    const statuses = Object.fromEntries(this.statuses.map((s) => [s.name, s.read()]));
    return { ready: results.length > 0 && results.every(([, ok]) => ok), checks: Object.fromEntries(results), figures: Object.fromEntries(figures), statuses };
  }
}
