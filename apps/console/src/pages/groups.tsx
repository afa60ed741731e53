import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { groupForest, type GroupNode } from '../lib/group-tree';
import { useGrants, useT } from '../ui/app-context';
import { useNames } from '../ui/catalog';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, Loading, PageHeader } from '../ui/kit';
import { LinkedList } from '../ui/links';
import { ListTable, type Row } from '../ui/list-page';
import { BackLink, Guard } from './common';

interface Group extends Row {
  group_name: string;
  group_description: string | null;
  groups?: { parent_id?: string; child_id?: string; id: string }[];
}

function TreeLevel({ nodes }: { nodes: GroupNode[] }) {
  return (
    <ul role="group">
      {nodes.map((n) => (
        <li
          key={n.id}
          role="treeitem"
          aria-expanded={n.children.length ? true : undefined}
          aria-selected={false}
        >
          <Link to="/groups/$id" params={{ id: n.id }}>
            {n.name}
          </Link>
          {n.children.length ? <TreeLevel nodes={n.children} /> : null}
        </li>
      ))}
    </ul>
  );
}

/** The nesting of the first 100 groups, drawn as a tree (a group with two parents under both). */
function GroupTree() {
  const t = useT();
  const q = useGet<{ items: Group[] }>('/api/v1/groups', { query: { limit: 100, expand: 'all' } });
  if (q.isPending) return <Loading />;
  if (q.error) return <ErrorBox error={q.error} scope="groups:read" />;
  const items = q.data.items;
  const edges = items.flatMap((g) =>
    (g.groups ?? []).map((c) => ({ parent: c.parent_id ?? g.id, child: c.child_id ?? c.id })),
  );
  const forest = groupForest(
    items.map((g) => ({ id: g.id, name: g.group_name })),
    edges,
  );
  return (
    <section aria-labelledby="group-tree-h" className="group-tree">
      <h2 id="group-tree-h">{t('groupTree')}</h2>
      <div role="tree" aria-labelledby="group-tree-h" id="group-tree">
        <TreeLevel nodes={forest} />
      </div>
    </section>
  );
}

export function GroupsPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Group>('POST', '/api/v1/groups', {
      body: { group_name: text(d, 'group_name'), group_description: text(d, 'group_description') || null },
    }),
  );
  return (
    <Guard group="groups">
      <PageHeader title={t('groups')}>
        {grants.write('groups') ? (
          <FormDialog
            id="new-group"
            label={t('newGroup')}
            title={t('newGroup')}
            scope="groups:write"
            onSubmit={async (d) => {
              const g = await create.mutateAsync(d);
              await navigate({ to: '/groups/$id', params: { id: g.id } });
            }}
          >
            <Field label={t('name')}>{(id) => <input id={id} name="group_name" required />}</Field>
            <Field label={t('description')}>{(id) => <input id={id} name="group_description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <div className="columns">
        <ListTable
          group="groups"
          path="/api/v1/groups"
          caption={t('groups')}
          searchFields={['group_name', 'group_description']}
          defaultFields={['group_name', 'group_description']}
          rowLink={(r) => ({ to: '/groups/$id', params: { id: r.id } })}
          columns={[
            { field: 'group_name', label: t('name'), sortable: true },
            { field: 'group_description', label: t('description') },
            { field: 'created_at', label: t('created'), sortable: true },
            { field: 'id', label: t('id') },
          ]}
        />
        <GroupTree />
      </div>
    </Guard>
  );
}

export function GroupPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { group_id: id };
  const group = useGet<Group>('/api/v1/groups/{group_id}', { path });
  const users = useNames('/api/v1/users', 'user_email', grants.read('users'));
  const roles = useNames('/api/v1/roles', 'role_name', grants.read('roles'));
  const groups = useNames('/api/v1/groups', 'group_name');
  const remove = useChange((call) => call('DELETE', '/api/v1/groups/{group_id}', { path }));
  const write = grants.write('groups');
  if (group.isPending) return <Loading />;
  if (group.error) return <ErrorBox error={group.error} scope="groups:read" />;
  const g = group.data;
  return (
    <Guard group="groups">
      <BackLink to="/groups" label={t('groups')} />
      <PageHeader title={g.group_name}>
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: g.group_name })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/groups' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={remove.error} scope="groups:write" />
      {g.group_description ? <p>{g.group_description}</p> : null}
      <div className="columns">
        <LinkedList
          title={t('childGroups')}
          listPath="/api/v1/groups/{group_id}/groups"
          path={path}
          bodyKey="groups"
          linkField="child_id"
          choices={groups.items.filter((c) => c.id !== id)}
          name={groups.name}
          writable={write}
          writeScope="groups:write"
          to="/groups/$id"
          addLabel={t('addChild')}
        />
        {grants.read('roles') ? (
          <LinkedList
            title={t('roles')}
            listPath="/api/v1/groups/{group_id}/roles"
            path={path}
            bodyKey="roles"
            linkField="role_id"
            choices={roles.items}
            name={roles.name}
            writable={write}
            writeScope="groups:write"
            to="/roles/$id"
            addLabel={t('addRole')}
          />
        ) : null}
        {grants.read('users') ? (
          <LinkedList
            title={t('members')}
            listPath="/api/v1/groups/{group_id}/members"
            path={path}
            bodyKey="users"
            linkField="user_id"
            choices={users.items}
            name={users.name}
            writable={write}
            writeScope="groups:write"
            to="/users/$id"
            addLabel={t('addMember')}
          />
        ) : null}
      </div>
    </Guard>
  );
}
