import { runService } from '@gatehouse/service';
import { treeService } from './tree.service-definition.js';

await runService(treeService);
