import { createRootRoute, createRoute, createRouter } from '@tanstack/react-router';
import { ClientPage, ClientsPage } from './pages/clients';
import { Dashboard } from './pages/dashboard';
import { GroupPage, GroupsPage } from './pages/groups';
import { InstancesPage, NotFoundPage, TicketsPage } from './pages/other';
import { ResourcePage, ResourcesPage } from './pages/resources';
import { RolePage, RolesPage } from './pages/roles';
import { TenantPage, TenantsPage } from './pages/tenants';
import { TreePage, TreesPage } from './pages/tree/trees';
import { VersionPage } from './pages/tree/version';
import { UserPage, UsersPage } from './pages/users';
import { Layout } from './ui/layout';

/**
 * The console's pages (code-based TanStack Router routes). The tree manager's pages hang under /trees; another
 * page is one more `page(...)` line here and a link in ui/layout.tsx.
 */
const root = createRootRoute({ component: Layout, notFoundComponent: NotFoundPage });
const page = (path: string, component: () => React.ReactNode) =>
  createRoute({ getParentRoute: () => root, path, component });

export const routeTree = root.addChildren([
  page('/', Dashboard),
  page('/clients', ClientsPage),
  page('/clients/$id', ClientPage),
  page('/resources', ResourcesPage),
  page('/resources/$id', ResourcePage),
  page('/users', UsersPage),
  page('/users/$id', UserPage),
  page('/roles', RolesPage),
  page('/roles/$id', RolePage),
  page('/groups', GroupsPage),
  page('/groups/$id', GroupPage),
  page('/tenants', TenantsPage),
  page('/tenants/$id', TenantPage),
  page('/instances', InstancesPage),
  page('/tickets', TicketsPage),
  page('/trees', TreesPage),
  page('/trees/$code', TreePage),
  page('/trees/$code/versions/$version', VersionPage),
]);

export const createConsoleRouter = () => createRouter({ routeTree, defaultPreload: false });
