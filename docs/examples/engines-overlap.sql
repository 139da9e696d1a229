with top as (select run_id, arm, question_id, chunk_id from arm_ranks where rank <= 10),
     ref as (select run_id, question_id, count(*) as n from top where arm = 'bm25' group by all),
     arms as (select distinct run_id, arm from arm_ranks),
     shared as (select a.run_id, a.arm, a.question_id, count(*) as n from top a join top b
                using (run_id, question_id, chunk_id) where b.arm = 'bm25' group by all),
     ov as (select arms.run_id, arms.arm, avg(coalesce(shared.n, 0) / ref.n) as overlap
            from arms join ref using (run_id)
            left join shared on shared.run_id = arms.run_id and shared.arm = arms.arm
                            and shared.question_id = ref.question_id
            group by all),
     rc as (select run_id, substr(config_id, 5) as arm, avg(value) as recall from metrics
            where metric = 'recall@5' and answerable and config_id like 'arm-%' group by all),
     em as (select arms.run_id, arms.arm, count(*) - count(distinct a.question_id) as empty
            from arms join questions q using (run_id)
            left join (select distinct run_id, arm, question_id from arm_ranks) a
                   on a.run_id = arms.run_id and a.arm = arms.arm and a.question_id = q.question_id
            group by all)
select run_id, arm, round(overlap, 3) as "overlap@10", round(recall, 3) as "recall@5", empty
from ov join rc using (run_id, arm) join em using (run_id, arm)
order by run_id, arm
