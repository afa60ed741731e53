import { Params } from './params.js';

/**
 * The records a request may reach: every row it reads or writes belongs to `instanceId`; a restricted caller (a
 * client that is not global) reaches only rows of `tenantId`, and one without a tenant reaches none.
 */
export interface RecordScope {
  instanceId: string;
  restricted: boolean;
  tenantId: string | null;
}

/** A table whose rows belong to an instance and, when `tenantScoped`, to at most one tenant. */
export interface TableDef {
  name: string;
  alias: string;
  /** Rows carry `tenant_id`: a restricted caller reaches only its tenant's. */
  tenantScoped: boolean;
}

/**
 * A table of an instance: its queries get `FROM` and the scoping conditions from here, so a query cannot reach
 * another instance's or another tenant's rows by forgetting a condition. Table modules (one per table) are the
 * only place SQL names a scoped table (a workspace check enforces it).
 */
export class ScopedTable implements TableDef {
  readonly name: string;
  readonly alias: string;
  readonly tenantScoped: boolean;

  constructor(def: TableDef) {
    this.name = def.name;
    this.alias = def.alias;
    this.tenantScoped = def.tenantScoped;
  }

  /** `<name> <alias>` */
  get from(): string {
    return `${this.name} ${this.alias}`;
  }

  /** The conditions confining `alias` (default the table's) to the scope, their parameters added to `p`. */
  conditions(scope: RecordScope, p: Params, alias = this.alias): string[] {
    const out = [`${alias}.instance_id = ${p.add(scope.instanceId)}`];
    if (this.tenantScoped && scope.restricted) {
      // A client that is not global reaches its own tenant only; one left without a tenant (rows from before
      // `is_global: false` required a tenant_id) reaches nothing, never the tenant-less records.
      out.push(scope.tenantId === null ? 'FALSE' : `${alias}.tenant_id = ${p.add(scope.tenantId)}`);
    }
    return out;
  }

  /** `WHERE`-ready text of `conditions`, joined with AND. */
  where(scope: RecordScope, p: Params, alias = this.alias): string {
    return this.conditions(scope, p, alias).join(' AND ');
  }
}

/** True when a record of `tenantId` is visible to a caller of `scope`. */
export function inScope(scope: RecordScope, tenantId: string | null): boolean {
  return !scope.restricted || (scope.tenantId !== null && tenantId === scope.tenantId);
}
