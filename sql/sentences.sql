-- sentence fingerprints: sentence_hashes(text, n, min_length)
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
       pg_get_function_arguments(p.oid) AS with_defaults,
       p.provolatile, p.proisstrict, p.proparallel, p.prorettype::regtype
FROM pg_proc p WHERE p.proname = 'sentence_hashes';

-- pinned: English, Chinese, mixed (fixed forever)
SELECT sentence_hashes('The quick brown fox jumps over the lazy dog. It barked twice at the moon! '
                       'Why would a fox do such a thing? Nobody knows; the dog slept on regardless.') AS english;
SELECT sentence_hashes('今天天气很好，我们一起去公园散步吧，顺便看看湖边新开的花。'
                       '公园里有很多人在跑步，也有老人在打太极拳和下象棋！'
                       '你知道为什么湖边的花今年开得特别早吗？') AS chinese;
SELECT sentence_hashes('PostgreSQL 是一个功能强大的开源对象关系数据库系统。It has more than 35 years of active development. '
                       '它以可靠性、功能健壮性和性能而闻名；全世界有很多公司在使用它。') AS mixed;
-- each hash is XXH3-64 of the sentence's tokens joined by one space
SELECT sentence_hashes('The quick brown fox jumps over the lazy dog. It barked twice at the moon!')
     = ARRAY(SELECT simhash_hash(array_to_string(simhash_tokens(s), ' ')) FROM
             unnest(ARRAY['The quick brown fox jumps over the lazy dog', 'It barked twice at the moon']) s
             ORDER BY 1) AS same_as_simhash_hash;
SELECT sentence_hashes('今天天气很好，我们一起去公园散步吧，顺便看看湖边新开的花。'
                       '公园里有很多人在跑步，也有老人在打太极拳和下象棋！'
                       '你知道为什么湖边的花今年开得特别早吗？')
     = ARRAY(SELECT simhash_hash(array_to_string(simhash_tokens(s), ' ')) FROM
             unnest(ARRAY['今天天气很好，我们一起去公园散步吧，顺便看看湖边新开的花',
                          '公园里有很多人在跑步，也有老人在打太极拳和下象棋']) s
             ORDER BY 1) AS chinese_two_of_20_chars,
       sentence_hashes('PostgreSQL 是一个功能强大的开源对象关系数据库系统。It has more than 35 years of active development. '
                       '它以可靠性、功能健壮性和性能而闻名；全世界有很多公司在使用它。')
     = ARRAY(SELECT simhash_hash(s) FROM
             unnest(ARRAY['postgresql 是 一 个 功 能 强 大 的 开 源 对 象 关 系 数 据 库 系 统',
                          'it has more than 35 years of active development']) s
             ORDER BY 1) AS mixed_two_of_20_chars;
-- ascending, so the array is canonical
SELECT h = ARRAY(SELECT unnest(h) ORDER BY 1) AS ascending, cardinality(h)
FROM sentence_hashes('The quick brown fox jumps over the lazy dog. It barked twice at the moon! '
                     'Why would a fox do such a thing? Nobody knows; the dog slept on regardless.') h;

-- nshash edge cases
-- short texts ending in 。: no fingerprint at all, so none shared
SELECT sentence_hashes('你好。') AS a, sentence_hashes('谢谢。') AS b,
       sentence_hashes('你好。') && sentence_hashes('谢谢。') AS share;
-- with min_length 1 each has its own fingerprint, never the empty sentence's
SELECT sentence_hashes('你好。', 5, 1) && sentence_hashes('谢谢。', 5, 1) AS share,
       sentence_hashes('你好。', 5, 1) = ARRAY[simhash_hash('你 好')] AS own_sentence,
       simhash_hash('') = ANY (sentence_hashes('你好。', 5, 1) || sentence_hashes('谢谢。', 5, 1)) AS empty_sentence;
-- empty text, punctuation only: an empty array
SELECT sentence_hashes('') AS empty, cardinality(sentence_hashes('')) AS n,
       sentence_hashes(E' \n\t。！？...;;') AS punctuation;
-- fewer than n sentences
SELECT cardinality(sentence_hashes('Only one sentence here, but long enough to count.')) AS one,
       cardinality(sentence_hashes('First long enough sentence here. Second long enough sentence here.', 5)) AS two;
-- repeated sentences count once (in any case and spacing)
SELECT cardinality(sentence_hashes(
         'This sentence is repeated many times. This sentence is repeated many times. '
         'THIS  SENTENCE  IS REPEATED many times! this sentence is repeated many times? '
         'Here is another sentence that is long enough.', 2)) AS distinct_two;
-- whitespace, case and full-width variants hash equal
SELECT sentence_hashes('Hello   World, this is a test sentence.  And another one follows here!')
     = sentence_hashes(E'  hello world, THIS is a test\tsentence.\nand another ONE follows here  ') AS whitespace_case,
       sentence_hashes('ＦＵＬＬ－ＷＩＤＴＨ　ｌｅｔｔｅｒｓ ａｒｅ ｒｅａｄ ａｓ ＡＳＣＩＩ．')
     = sentence_hashes('full-width letters are read as ascii.') AS full_width,
       sentence_hashes('中文和English之间的空格不影响指纹的计算结果。')
     = sentence_hashes('中文和 English 之间的空格不影响指纹的计算结果。') AS script_spacing;
-- min_length counts characters (letters, digits), not bytes, spaces or punctuation
SELECT cardinality(sentence_hashes('一二三四五六七八九十一二三四五六七八九十。', 5, 20)) AS zh_20_of_20,
       cardinality(sentence_hashes('一二三四五六七八九十一二三四五六七八九十。', 5, 21)) AS zh_20_of_21,
       octet_length('一二三四五六七八九十一二三四五六七八九十') AS bytes,
       cardinality(sentence_hashes('abcde fghij, klmno (pqrst).', 5, 20)) AS en_20_of_20,
       cardinality(sentence_hashes('abcde fghij, klmno (pqrst).', 5, 21)) AS en_20_of_21;
-- the n longest, ties by position
SELECT sentence_hashes('Short one here now. A much longer sentence than the others. Medium sized sentence.', 2, 1)
     = ARRAY(SELECT simhash_hash(s) FROM unnest(ARRAY['a much longer sentence than the others',
                                                     'medium sized sentence']) s ORDER BY 1) AS longest_two,
       sentence_hashes('aaaa bbbb. cccc dddd. eeee ffff.', 2, 1)
     = ARRAY(SELECT simhash_hash(s) FROM unnest(ARRAY['aaaa bbbb', 'cccc dddd']) s ORDER BY 1) AS ties_first;
-- sentence ends: 。！？；．, and .!?; before whitespace or the end (3.14 and a.b do not split)
SELECT cardinality(sentence_hashes('第一句。第二句！第三句？第四句；第五句．第六句', 10, 1)) AS zh_six,
       cardinality(sentence_hashes('One. Two! Three? Four; five', 10, 1)) AS en_five,
       cardinality(sentence_hashes('pi is 3.14 and e.g. a.b is one', 10, 1)) AS two,
       cardinality(sentence_hashes(E'line one\nline two\r\nline three', 10, 1)) AS lines;

-- NULLs and bad parameters
SELECT sentence_hashes(NULL) IS NULL AS null_text, sentence_hashes('x', NULL) IS NULL AS null_n,
       sentence_hashes('x', 5, NULL) IS NULL AS null_min_length;
\set VERBOSITY sqlstate
SELECT sentence_hashes('x', 0);
SELECT sentence_hashes('x', -1);
SELECT sentence_hashes('x', 5, 0);
SELECT sentence_hashes('x', 5, -10);
\set VERBOSITY default
SELECT sentence_hashes('x', 0);
SELECT sentence_hashes('x', 5, 0);
-- large n: every distinct sentence
SELECT cardinality(sentence_hashes(string_agg(format('sentence number %s is here.', g % 700), ' '), 2147483647, 1))
FROM generate_series(1, 1000) g;
-- a 10 MB text
SELECT cardinality(sentence_hashes(repeat('A sentence repeated many times over. ', 300000) || 'The one sentence that differs from all the others.')) AS two;

-- indexed lookup: GIN on the expression, && with the query's fingerprints
CREATE TABLE sentence_docs (id int PRIMARY KEY, body text);
INSERT INTO sentence_docs
SELECT g, format('Article %s opens with a sentence that nobody else will write. Its second sentence, number %s, '
                 'is as unique as the first one was. And a third sentence closes article %s for good.', g, g * 7, g)
FROM generate_series(1, 600) g;
-- reposts: an added header and footer, another case, spacing and a changed last sentence
INSERT INTO sentence_docs
SELECT 10000 + id, E'Home | News | Contact\n\n' || upper(replace(body, ' is as ', '  is  as ')) || E'\n\nShare this article!'
FROM sentence_docs WHERE id % 100 = 0;
INSERT INTO sentence_docs
SELECT 20000 + id, regexp_replace(body, 'closes article .*', 'was changed by reposting site ' || id || '.')
FROM sentence_docs WHERE id % 250 = 0 AND id < 10000;
INSERT INTO sentence_docs VALUES (30000, ''), (30001, '你好。'), (30002, '谢谢。');
CREATE INDEX sentence_docs_fp ON sentence_docs USING gin (sentence_hashes(body));
ANALYZE sentence_docs;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM sentence_docs WHERE sentence_hashes(body) && sentence_hashes('Article 500 opens with a sentence.');
SELECT id FROM sentence_docs
WHERE sentence_hashes(body) && (SELECT sentence_hashes(body) FROM sentence_docs WHERE id = 500) ORDER BY id;
SELECT id FROM sentence_docs WHERE sentence_hashes(body) && sentence_hashes('你好。') ORDER BY id;
SELECT id FROM sentence_docs WHERE sentence_hashes(body) && sentence_hashes('') ORDER BY id;
-- every document's reposts: the index and a sequential scan agree
CREATE TEMP TABLE by_index AS
SELECT q.id AS q, d.id AS d FROM sentence_docs q, LATERAL
  (SELECT id FROM sentence_docs d WHERE sentence_hashes(d.body) && sentence_hashes(q.body)) d;
RESET enable_seqscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM sentence_docs WHERE sentence_hashes(body) && sentence_hashes('Article 500 opens with a sentence.');
CREATE TEMP TABLE by_seqscan AS
SELECT q.id AS q, d.id AS d FROM sentence_docs q, LATERAL
  (SELECT id FROM sentence_docs d WHERE sentence_hashes(d.body) && sentence_hashes(q.body)) d;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT (SELECT count(*) FROM by_index) AS pairs_index, (SELECT count(*) FROM by_seqscan) AS pairs_seqscan,
       (SELECT count(*) FROM (SELECT * FROM by_index EXCEPT SELECT * FROM by_seqscan) x) AS only_index,
       (SELECT count(*) FROM (SELECT * FROM by_seqscan EXCEPT SELECT * FROM by_index) x) AS only_seqscan,
       (SELECT count(*) FROM by_index WHERE q <> d) AS repost_pairs;
-- the work space is reused from row to row: the order of the rows does not matter
SELECT (SELECT string_agg(h::text, ' ' ORDER BY id) FROM (SELECT id, sentence_hashes(body) h FROM sentence_docs ORDER BY id) a)
     = (SELECT string_agg(h::text, ' ' ORDER BY id) FROM (SELECT id, sentence_hashes(body) h FROM sentence_docs ORDER BY id DESC) b)
       AS same_in_any_order;
DROP TABLE sentence_docs;

-- the same fingerprints whatever the database encoding
CREATE DATABASE sentences_latin1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE sentences_ascii ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
SELECT sentence_hashes('École numéro un, à Paris, près de la Seine. Straße und Café sind schön!', 5, 1) AS utf8;
\c sentences_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT sentence_hashes('École numéro un, à Paris, près de la Seine. Straße und Café sind schön!', 5, 1) AS latin1;
\c sentences_ascii
SET client_encoding = 'SQL_ASCII';
CREATE EXTENSION simhash;
SELECT sentence_hashes('École numéro un, à Paris, près de la Seine. Straße und Café sind schön!', 5, 1) AS sql_ascii;
\c contrib_regression
DROP DATABASE sentences_latin1;
DROP DATABASE sentences_ascii;

-- group ids (nshash's similar_id) through shared_key_groups: reposts share
-- a sentence; a later repost that quotes two earlier articles bridges and
-- merges their groups; ids are the least id, stable for unchanged groups
CREATE TABLE articles (id int, body text);
INSERT INTO articles VALUES
	(1, 'The city council approved the new budget for public libraries on Monday evening. Critics said the plan was rushed.'),
	(2, E'Local news\nThe city council approved the new budget for public libraries on Monday evening. Subscribe for more.'),
	(3, '研究人员在南极冰层下发现了一种新的微生物群落。这一发现可能改变我们对生命极限的理解。'),
	(4, E'转载\n研究人员在南极冰层下发现了一种新的微生物群落。欢迎关注我们的公众号。'),
	(5, 'An unrelated piece about gardening tools and how to keep them sharp through winter.');
CREATE VIEW article_sentences AS SELECT id, sentence_hashes(body) AS keys FROM articles;
SELECT id, group_id AS similar_id FROM shared_key_groups('article_sentences', 'id', 'keys', id_type => NULL::int) ORDER BY id;
INSERT INTO articles VALUES
	(6, E'Roundup of the week\nCritics said the plan was rushed.\n研究人员在南极冰层下发现了一种新的微生物群落。');
SELECT id, group_id AS similar_id FROM shared_key_groups('article_sentences', 'id', 'keys', id_type => NULL::int) ORDER BY id;
DROP VIEW article_sentences;
DROP TABLE articles;
