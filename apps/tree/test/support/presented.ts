import type { Db } from '@gatehouse/db';
import { asIs, Presenter, type EnvelopeV1 } from '@gatehouse/query';
import type { Actor } from '../../src/common/actor.js';
import type { InstanceKey } from '../../src/common/instance.js';
import type { Language } from '../../src/common/language.js';
import type { CloneNodeDto, CreateNodeDto, UpdateNodeDto } from '../../src/nodes/dto/node.dto.js';
import { nodeSpec, type NodeRecord } from '../../src/nodes/node.record.js';
import { NodesService } from '../../src/nodes/nodes.service.js';
import type { CloneVersionDto, CreateVersionDto } from '../../src/versions/dto/version.dto.js';
import { versionSpec, type VersionRecord } from '../../src/versions/version.record.js';
import { VersionsService } from '../../src/versions/versions.service.js';

/*
 * Services called as the controllers call them: the raw query parsed and the records presented, so a test of a
 * service sees what an HTTP answer would carry.
 */

type Q = Record<string, unknown>;

const N = new Presenter<NodeRecord>('v1', nodeSpec, asIs);
const V = new Presenter<VersionRecord>('v1', versionSpec, asIs);

const one = <T>(P: Presenter<T>, q: Q, run: (read: ReturnType<Presenter<T>['read']>) => Promise<T>) => {
  const read = P.read(q);
  return run(read).then((record) => P.one(record, read) as Partial<T>);
};

/** NodesService's reads and writes, query in and presentation out. */
export function presentedNodes(db: Db) {
  const svc = new NodesService(db);
  return {
    read: {
      list: async (i: InstanceKey, code: string, version: string, q: Q, lang?: Language) =>
        N.page(await svc.read.list(i, code, version, N.list(q), lang)) as EnvelopeV1<Partial<NodeRecord>>,
      descendants: async (i: InstanceKey, code: string, version: string, id: string, q: Q, lang?: Language) =>
        N.page(await svc.read.descendants(i, code, version, id, N.list(q), lang)) as EnvelopeV1<
          Partial<NodeRecord>
        >,
      get: (i: InstanceKey, code: string, version: string, id: string, q: Q, lang?: Language) =>
        one(N, q, (read) => svc.read.get(i, code, version, id, read, lang)),
    },
    write: {
      create: (i: InstanceKey, code: string, version: string, dto: CreateNodeDto, actor: Actor, q: Q) =>
        one(N, q, (read) => svc.write.create(i, code, version, dto, actor, read)),
      update: (
        i: InstanceKey,
        code: string,
        version: string,
        id: string,
        dto: UpdateNodeDto,
        actor: Actor,
        q: Q,
        lang?: Language,
      ) => one(N, q, (read) => svc.write.update(i, code, version, id, dto, actor, read, lang)),
      clone: (
        i: InstanceKey,
        code: string,
        version: string,
        id: string,
        dto: CloneNodeDto,
        deep: boolean,
        actor: Actor,
        q: Q,
        lang?: Language,
      ) => one(N, q, (read) => svc.write.clone(i, code, version, id, dto, deep, actor, read, lang)),
      remove: svc.write.remove.bind(svc.write),
    },
  };
}

/** VersionsService's operations the tests use, query in and presentation out. */
export function presentedVersions(db: Db) {
  const svc = new VersionsService(db);
  return {
    list: async (i: InstanceKey, code: string, q: Q, lang?: Language) =>
      V.page(await svc.list(i, code, V.list(q), lang)) as EnvelopeV1<Partial<VersionRecord>>,
    get: (i: InstanceKey, code: string, version: string, q: Q, lang?: Language) =>
      one(V, q, (read) => svc.get(i, code, version, read, lang)),
    create: (i: InstanceKey, code: string, dto: CreateVersionDto, actor: Actor, q: Q, lang?: Language) =>
      one(V, q, (read) => svc.create(i, code, dto, actor, read, lang)),
    clone: (
      i: InstanceKey,
      code: string,
      version: string,
      dto: CloneVersionDto,
      actor: Actor,
      q: Q,
      lang?: Language,
    ) => one(V, q, (read) => svc.clone(i, code, version, dto, actor, read, lang)),
    remove: svc.remove.bind(svc),
  };
}
