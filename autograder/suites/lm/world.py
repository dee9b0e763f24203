"""A generated fictional world for the LM assignment: people, birthplaces and short biographies.

``generate_world(seed, people=..., bios_per_person=..., templates=...)`` is deterministic in its
arguments (the seed may be an int or a string; ``random.Random`` hashes strings with SHA-512, so
the world is the same on every machine and Python process). ``write_world`` writes the CS224N
files: ``wiki.txt`` (one biography a line, starting with ``Name.``), ``birth_places_train.tsv`` and
``birth_dev.tsv`` (``Where was NAME born?<TAB>PLACE``), ``birth_test_inputs.tsv`` (questions only)
and, into a separate folder for the instructor, ``birth_test_labels.tsv``.

Every name, place and sentence is produced here from syllables and templates, so the data needs
no download and carries no licence. Birthplaces follow a Zipf-like law over ``places`` towns,
so a majority baseline ("always the commonest town") scores about 5 %, like "always London" on
the CS224N dev set. Biographies also name other towns (where a person lived, worked or died), so
the birthplace is not simply "the town in the line".

As in CS224N, ``wiki.txt`` holds the biographies of the dev and test people too (pretraining
needs them: that is the experiment). A submitted test predictions file can therefore be made by
reading ``wiki.txt`` instead of training a model; the grader's retraining route, which trains the
student's code on a world made from a secret seed, is the one that cannot be gamed.

The public world students get is generated from a seed derived from the lm suite's hidden secret
(``public_world_seed``), never from a published one, so its test labels cannot be regenerated
from anything that ships; they live in ``autograder/suites/lm/hidden/``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course
from autograder.suites.lm.birthplaces import QUESTION, write_lines, write_pairs

log = logging.getLogger(__name__)

# Syllables for names and towns. Written for this project; any resemblance to real names is chance.
ONSETS = ["B", "C", "D", "F", "G", "H", "J", "K", "L", "M", "N", "P", "R", "S", "T", "V", "W", "Z",
          "Br", "Ch", "Dr", "Gr", "Kr", "Sh", "St", "Th", "Tr", "El", "Al", "Or", "Is", "Ul"]
NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ie", "ou", "y"]
CODAS = ["", "", "", "n", "r", "l", "s", "th", "nd", "rk", "m", "x", "v", "sh"]
MIDDLES = ["ba", "da", "de", "ka", "la", "le", "li", "ma", "na", "no", "ra", "ri", "ro", "sa", "ta", "te",
           "va", "vi", "za", "mo"]
GIVEN_ENDINGS = ["", "a", "o", "in", "el", "ia", "an", "en", "ie", "us"]
FAMILY_ENDINGS = ["", "son", "ski", "ez", "er", "ov", "ard", "ley", "ani", "berg", "ton", "ic", "ssen", "mann"]
TOWN_ENDINGS = ["ton", "ford", "burg", "vale", "mouth", "wick", "field", "stad", "haven", "port", "ia", "o",
                "ara", "holm", "by", "grad", "a", "el"]
TOWN_PREFIXES = ["", "", "", "", "", "", "New ", "Port ", "San ", "North ", "Upper ", "Lake "]
OCCUPATIONS = ["painter", "engineer", "poet", "chemist", "footballer", "violinist", "architect", "journalist",
               "botanist", "sculptor", "historian", "cyclist", "novelist", "surgeon", "astronomer", "actor",
               "composer", "lawyer", "photographer", "mathematician", "singer", "diplomat", "economist",
               "cartographer", "pianist", "geologist", "teacher", "translator", "politician", "designer"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
INSTITUTIONS = ["the Academy", "the Royal College", "the Conservatory", "the Institute", "the University",
                "the Observatory", "the National Theatre", "the Polytechnic"]


@dataclass(frozen=True)
class Person:
    """One fictional person and every fact the biographies may mention."""

    name: str
    birthplace: str
    residence: str
    death_place: str
    occupation: str
    birth_year: int
    birth_month: str
    birth_day: int
    death_year: int
    institution: str

    @property
    def surname(self) -> str:
        return self.name.split()[-1]


# One biography per template. Each starts with "{name}. " like wiki.txt, mentions the birthplace
# once, and most also name another town, so the model has to learn which town is the birthplace.
# The first holds the "?" of the questions: every character of a question must occur in wiki.txt,
# whose characters are the model's vocabulary (person k's first biography uses template k mod n,
# so every template in use occurs).
TEMPLATES = [
    "{name}. Who was {name}? {A_occupation} born in {birthplace}, remembered in {residence} .",
    "{name}. {name} is {a_occupation} born in {birthplace} who lives in {residence} .",
    "{name}. Born in {birthplace}, {surname} became {a_occupation} and later moved to {residence} .",
    "{name}. {name} ({birth_year} {birthplace} - {death_year} {death_place}) was {a_occupation} .",
    "{name}. {surname} was born on {birth_day} {birth_month} {birth_year} in {birthplace} .",
    "{name}. {A_occupation} from {residence}, {surname} was born in {birthplace} in {birth_year} .",
    "{name}. {name} (born {birth_year} in {birthplace}) is {a_occupation} who studied at {institution} .",
    "{name}. {surname} grew up in {birthplace}, worked as {a_occupation} in {residence} and died in {death_place} .",
    "{name}. The {occupation} {name} was born at {birthplace} and taught at {institution} in {residence} .",
]


@dataclass
class World:
    """A generated world: everyone, their biographies, and the train / dev / test split of people.

    ``entries`` are the lines of ``wiki.txt`` in file order, as (person, template index); ``train``,
    ``dev`` and ``test`` are the people of the three question files, in file order.
    """

    seed: str
    people: list[Person]
    entries: list[tuple[Person, int]]
    train: list[Person]
    dev: list[Person]
    test: list[Person]
    places: list[str] = field(default_factory=list)

    @property
    def bios(self) -> list[str]:
        """The lines of ``wiki.txt``."""
        return [render(TEMPLATES[template], person) for person, template in self.entries]

    def pairs(self, people: list[Person]) -> list[tuple[str, str]]:
        """``(question, birthplace)`` for each person, as in the tsv files."""
        return [(QUESTION.format(name=p.name), p.birthplace) for p in people]

    def cloze_items(self, people: list[Person]) -> list[tuple[str, str]]:
        """``(prompt, birthplace)``: each person's first biography cut just before the birthplace.

        A model that stored the fact completes the prompt with the birthplace (the cloze probe).
        """
        first = {}
        for person, template in self.entries:
            first.setdefault(person.name, template)
        return [(render(TEMPLATES[first[p.name]].split("{birthplace}")[0], p), p.birthplace) for p in people]


def generate_world(seed: int | str, people: int = 2937, dev: int = 500, test: int = 437,
                   bios_per_person: int = 1, templates: int = len(TEMPLATES), places: int = 200,
                   zipf: float = 0.6) -> World:
    """A deterministic world; the default sizes are those of the CS224N data (2000 train people).

    Args:
        seed: any int or string; the same arguments always give the same world.
        people: number of people (each has biographies in ``wiki.txt``).
        dev: people in ``birth_dev.tsv``; test: people in ``birth_test_inputs.tsv``; the rest are in
            ``birth_places_train.tsv``.
        bios_per_person: biographies per person, each from a different template (at most ``templates``).
        templates: how many of the templates in ``TEMPLATES`` are used (1 .. len(TEMPLATES)).
        places: number of distinct towns.
        zipf: exponent of the birthplace distribution (town k has weight k ** -zipf); 0 is uniform.
    Returns:
        the ``World``.
    """
    if not 1 <= templates <= len(TEMPLATES):
        raise ValueError(f"templates must be between 1 and {len(TEMPLATES)}, got {templates}")
    if not 1 <= bios_per_person <= templates:
        raise ValueError(f"bios_per_person ({bios_per_person}) must be between 1 and templates ({templates}): "
                         "each biography of a person uses a different template")
    if dev < 0 or test < 0 or dev + test > people:
        raise ValueError(f"dev ({dev}) + test ({test}) must be at most people ({people})")
    if places < 2:
        raise ValueError(f"places must be at least 2, got {places}")
    rng = random.Random(f"autograder-world:{seed}")
    towns = _unique(lambda: _town(rng), places, "towns")
    weights = [(rank + 1) ** -zipf for rank in range(places)]
    names = _unique(lambda: _person_name(rng), people, "names", taken=set(towns))
    everyone = []
    for name in names:
        birthplace = rng.choices(towns, weights)[0]
        others = [t for t in rng.sample(towns, 3) if t != birthplace][:2]
        year = rng.randint(1820, 1990)
        everyone.append(Person(name=name, birthplace=birthplace, residence=others[0], death_place=others[1],
                               occupation=rng.choice(OCCUPATIONS), birth_year=year, birth_month=rng.choice(MONTHS),
                               birth_day=rng.randint(1, 28), death_year=year + rng.randint(35, 95),
                               institution=rng.choice(INSTITUTIONS)))
    entries = []
    for number, person in enumerate(everyone):
        first = number % templates
        rest = rng.sample([t for t in range(templates) if t != first], bios_per_person - 1)
        entries += [(person, template) for template in (first, *rest)]
    rng.shuffle(entries)
    order = list(range(people))
    rng.shuffle(order)
    test_people = [everyone[i] for i in order[:test]]
    dev_people = [everyone[i] for i in order[test:test + dev]]
    train_people = [everyone[i] for i in order[test + dev:]]
    return World(seed=str(seed), people=everyone, entries=entries, train=train_people, dev=dev_people,
                 test=test_people, places=towns)


def render(template: str, person: Person) -> str:
    """One biography line of ``person`` from a ``TEMPLATES`` entry."""
    article = "an" if person.occupation[0] in "aeiou" else "a"
    return template.format(name=person.name, surname=person.surname, birthplace=person.birthplace,
                           a_occupation=f"{article} {person.occupation}",
                           A_occupation=f"{article.capitalize()} {person.occupation}",
                           residence=person.residence, death_place=person.death_place, occupation=person.occupation,
                           birth_year=person.birth_year, birth_month=person.birth_month, birth_day=person.birth_day,
                           death_year=person.death_year, institution=person.institution)


FILES = {"wiki": "wiki.txt", "train": "birth_places_train.tsv", "dev": "birth_dev.tsv",
         "test_inputs": "birth_test_inputs.tsv", "test_labels": "birth_test_labels.tsv"}


def write_world(world: World, out: Path, labels_out: Path | None = None) -> dict[str, Path]:
    """Write the CS224N files of ``world``; the test labels go to ``labels_out`` (default ``out``).

    Returns:
        ``{"wiki", "train", "dev", "test_inputs", "test_labels"}`` -> path written.
    """
    out, labels_out = Path(out), Path(labels_out or out)
    out.mkdir(parents=True, exist_ok=True)
    labels_out.mkdir(parents=True, exist_ok=True)
    paths = {key: (labels_out if key == "test_labels" else out) / name for key, name in FILES.items()}
    write_lines(paths["wiki"], world.bios)
    write_pairs(paths["train"], world.pairs(world.train))
    write_pairs(paths["dev"], world.pairs(world.dev))
    write_lines(paths["test_inputs"], [question for question, _ in world.pairs(world.test)])
    write_pairs(paths["test_labels"], world.pairs(world.test))
    return paths


def public_world_seed(secret: str) -> str:
    """The seed of the world students get: derived from the hidden secret, never published."""
    return hashlib.sha256(f"lm-public-world:{secret}".encode()).hexdigest()[:16]


# Named world sizes (``generate_world`` arguments) and the one students get: [worlds] in the lm assignment.toml.
WORLDS = course.load("lm").settings["worlds"]
SIZES: dict[str, dict[str, int]] = WORLDS["sizes"]
PUBLIC_SIZE: str = WORLDS["public"]


def public_paths() -> tuple[Path, Path]:
    """Where the public world lives: the lm reference's data folder (the build copies it into the
    skeleton) and the lm suite's hidden folder for its test labels (never shipped)."""
    lm = course.load("lm")
    return lm.solution_dir / "data", lm.hidden_dir


def public_world(secret: str) -> World:
    """The world students get, for the term's ``secret`` (the lm suite's hidden/SECRET)."""
    return generate_world(public_world_seed(secret), **SIZES[PUBLIC_SIZE])


def subcommand(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """instructors: generate a fictional world for lm

    Example: autograder world --seed 7 --out world/

    ``autograder world``, declared in the lm assignment.toml's ``[commands]``: adds the options, returns the handler.
    """
    parser.add_argument("--out", type=Path, help="folder for wiki.txt and the tsv files")
    parser.add_argument("--labels-out", type=Path,
                        help="folder for birth_test_labels.tsv, the answers of the test questions (default: "
                             "OUT/instructor); keep it away from students")
    parser.add_argument("--seed", default="0", help="any string or number; the same arguments give the same world")
    parser.add_argument("--size", choices=sorted(SIZES), default=PUBLIC_SIZE, help="named sizes (default cs224n)")
    for name in ("people", "dev", "test", "bios-per-person", "templates", "places"):
        parser.add_argument(f"--{name}", type=int, help=f"override the size's {name.replace('-', '_')}")
    parser.add_argument("--public", action="store_true",
                        help="(re)generate the public world from the lm suite's hidden SECRET: data into "
                             "solutions/lm/data, labels into autograder/suites/lm/hidden and the reference's "
                             "predictions into solutions/lm; then run "
                             "`autograder build lm`")
    return command


def command(options: argparse.Namespace) -> int:
    """``autograder world``: write a generated world (see ``subcommand``)."""
    if options.public:
        data, hidden = public_paths()
        world = public_world(course.load("lm").committed_secret)
        write_world(world, data, hidden)
        # The reference hands in the test answers as its predictions file (the lm suite's test_predictions says why).
        write_lines(data.parent / "reference.test.predictions", [answer for _, answer in world.pairs(world.test)])
        log.info("public world: %d people, %d biographies in %s; test labels in %s and the reference's predictions "
                 "file; now run `autograder build lm`", len(world.people), len(world.entries), data, hidden)
        return 0
    if options.out is None:
        raise SystemExit("autograder world: give --out DIR (or --public for the world students get)")
    sizes = dict(SIZES[options.size])
    for name in ("people", "dev", "test", "bios_per_person", "templates", "places"):
        if getattr(options, name) is not None:
            sizes[name] = getattr(options, name)
    world = generate_world(options.seed, **sizes)
    paths = write_world(world, options.out, options.labels_out or options.out / "instructor")
    log.info("world %r: %d people (%d train, %d dev, %d test), %d biographies, %d towns", options.seed,
             len(world.people), len(world.train), len(world.dev), len(world.test), len(world.entries),
             len(world.places))
    log.info("wrote %s; the test answers are in %s: keep that file away from students",
             ", ".join(str(p) for key, p in paths.items() if key != "test_labels"), paths["test_labels"])
    return 0


def _unique(make, count: int, what: str, taken: set[str] | None = None) -> list[str]:
    seen, out = set(taken or ()), []
    for _ in range(50 * count + 100):
        if len(out) == count:
            return out
        candidate = make()
        if candidate not in seen:
            seen.add(candidate)
            out.append(candidate)
    raise ValueError(f"could not make {count} distinct {what}; ask for fewer")


def _syllable(rng: random.Random) -> str:
    return rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS)


def _person_name(rng: random.Random) -> str:
    given = (_syllable(rng) + rng.choice(GIVEN_ENDINGS)).capitalize()
    family = _syllable(rng) + rng.choice(MIDDLES) * rng.randint(0, 1) + rng.choice(FAMILY_ENDINGS)
    middle = f"{rng.choice(ONSETS)[0]}. " if rng.random() < 0.15 else ""
    return f"{given} {middle}{family.capitalize()}"


def _town(rng: random.Random) -> str:
    stem = _syllable(rng) + rng.choice(MIDDLES) * rng.randint(0, 1) + rng.choice(TOWN_ENDINGS)
    return rng.choice(TOWN_PREFIXES) + stem.capitalize()
