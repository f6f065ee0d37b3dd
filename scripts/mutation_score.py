"""One line per cosmic-ray session: module, killed / completed, score, pending, and the
surviving mutants (line and operator), for scripts/mutate.sh's summary."""
import sys

from cosmic_ray.work_db import WorkDB, use_db


def main(db_path, module):
    with use_db(db_path, WorkDB.Mode.open) as db:
        items = {item.job_id: item for item in db.work_items}
        results = dict(db.results)
    done = [r for r in results.values() if r.test_outcome is not None]
    killed = [r for r in done if r.is_killed]
    score = 100.0 * len(killed) / len(done) if done else 0.0
    print(f"{module}: {len(killed)}/{len(done)} killed ({score:.1f}%), "
          f"{len(items) - len(results)} pending")
    for job_id, result in sorted(results.items()):
        if result.test_outcome is not None and not result.is_killed:
            for m in items[job_id].mutations:
                print(f"  survived: line {m.start_pos[0]} {m.operator_name} #{m.occurrence}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
