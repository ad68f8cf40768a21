-- The SQLite workload of bench/run.py, run as `sqlite3 :memory: '.read bench.sql'` after
-- bench/run.py replaces @ROWS@ with the row count. Deterministic: the data comes from a
-- recursive CTE and integer arithmetic; the output is a few aggregate lines.
PRAGMA cache_size = -65536;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, score REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER, price REAL, note TEXT);

BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@ / 10)
INSERT INTO customer
  SELECT i, 'customer-' || i, 'city-' || (i * 7919 % 97), (i * 104729 % 1000) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@)
INSERT INTO orders
  SELECT i, 1 + (i * 2654435761 % (@ROWS@ / 10)), 'item-' || (i * 31 % 1009), 1 + i % 9,
         (i * 48271 % 100000) / 100.0, printf('order %d of %X', i, i * 16807 % 65536)
  FROM n;
COMMIT;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);

-- aggregates, joins, sorting, string functions
SELECT count(*), sum(qty), round(sum(qty * price), 2) FROM orders;
SELECT c.city, count(*), round(avg(o.price), 3)
  FROM orders o JOIN customer c ON c.id = o.customer
  GROUP BY c.city ORDER BY 2 DESC, 1 LIMIT 5;
SELECT item, sum(qty) AS q FROM orders GROUP BY item ORDER BY q DESC, item LIMIT 5;
SELECT count(*) FROM orders WHERE note LIKE '%A%' AND upper(item) GLOB 'ITEM-1*';
SELECT name, total FROM (
  SELECT c.name, sum(o.qty * o.price) AS total FROM customer c JOIN orders o ON o.customer = c.id
  GROUP BY c.id) ORDER BY total DESC LIMIT 3;
SELECT count(DISTINCT substr(note, 7, 3)), max(length(note)) FROM orders;

-- indexed point lookups and range scans
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@ / 4)
SELECT sum((SELECT count(*) FROM orders WHERE customer = 1 + (i * 7 % (@ROWS@ / 10)))) FROM n;

-- updates and deletes
BEGIN;
UPDATE orders SET price = price * 1.1, note = note || '!' WHERE qty > 6;
DELETE FROM orders WHERE id % 13 = 0;
UPDATE customer SET score = (SELECT coalesce(sum(qty), 0) FROM orders WHERE customer = customer.id);
COMMIT;
SELECT count(*), round(sum(price), 2), round(sum(score), 1) FROM orders, (SELECT sum(score) AS score FROM customer);

-- window functions
SELECT customer, id, rank FROM (
  SELECT customer, id, rank() OVER (PARTITION BY customer ORDER BY price DESC) AS rank FROM orders)
  WHERE rank = 1 ORDER BY customer LIMIT 3;
