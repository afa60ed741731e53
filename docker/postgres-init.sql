-- Second database, for apps/tree (the first, gatehouse, is created by POSTGRES_DB).
CREATE DATABASE gatehouse_tree OWNER gatehouse;
