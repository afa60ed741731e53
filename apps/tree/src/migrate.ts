import { migrateService } from '@gatehouse/service';
import { treeService } from './tree.service-definition.js';

await migrateService(treeService);
