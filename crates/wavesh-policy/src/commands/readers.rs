//! Commands that read files and print them or facts about them.

use super::Entry;

const LS: &str = "-1 -a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v -x -X -Z \
    -I$ -T# -w# \
    --all --almost-all --author --escape --block-size=$ --ignore-backups --color=? --colour=? --directory --dired \
    --classify=? --file-type --format=$ --full-time --group-directories-first --no-group --human-readable --si \
    --dereference-command-line --dereference-command-line-symlink-to-dir --hide=$ --hyperlink=? --indicator-style=$ \
    --inode --ignore=$ --kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars \
    --quote-name --quoting-style=$ --reverse --recursive --size --sort=$ --time=$ --time-style=$ --tabsize=# \
    --width=# --context --zero --help --version @files";

const HEAD_TAIL: &str = "-c# -n# -q -v -z -f -F -s# \
    --bytes=# --lines=# --quiet --silent --verbose --zero-terminated --follow=? --retry --sleep-interval=# --pid=# \
    --max-unchanged-stats=# --help --version @files @num";

pub(super) const COMMANDS: &[Entry] = &[
    (
        "cat",
        Some(
            "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs --show-nonprinting --help --version @files",
        ),
        None,
    ),
    ("head", Some(HEAD_TAIL), None),
    ("tail", Some(HEAD_TAIL), None),
    ("ls", Some(LS), None),
    ("dir", Some(LS), None),
    ("vdir", Some(LS), None),
    (
        "nl",
        Some(
            "-b$ -d$ -f$ -h$ -i# -l# -n$ -p -s$ -v# -w# --body-numbering=$ --section-delimiter=$ --footer-numbering=$ --header-numbering=$ --line-increment=# --join-blank-lines=# --number-format=$ --no-renumber --number-separator=$ --starting-line-number=# --number-width=# @files",
        ),
        None,
    ),
    (
        "tac",
        Some("-b -r -s$ --before --regex --separator=$ @files"),
        None,
    ),
    (
        "wc",
        Some(
            "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total=$ --help --version @files",
        ),
        None,
    ),
    (
        "stat",
        Some(
            "-L -f -t -c$ --dereference --file-system --terse --format=$ --printf=$ --cached=$ --help --version @files",
        ),
        None,
    ),
    (
        "file",
        Some(
            "-b -c -E -h -i -k -l -L -N -p -r -s -S -z -Z -0 -e$ -F$ -P$ -m$ --brief --checking-printout --dereference --no-dereference --mime --mime-type --mime-encoding --keep-going --list --no-pad --preserve-date --raw --special-files --uncompress --uncompress-noreport --exclude=$ --separator=$ --magic-file=$ --help --version @files @writes",
        ),
        None,
    ),
    (
        "md5sum",
        Some("-b -t -z --binary --tag --text --zero @files"),
        None,
    ),
    (
        "sha1sum",
        Some("-b -t -z --binary --tag --text --zero @files"),
        None,
    ),
    (
        "sha256sum",
        Some("-b -t -z --binary --tag --text --zero @files"),
        None,
    ),
    (
        "sha512sum",
        Some("-b -t -z --binary --tag --text --zero @files"),
        None,
    ),
    (
        "b2sum",
        Some("-b -t -z -l# --binary --tag --text --zero --length=# @files"),
        None,
    ),
    (
        "cksum",
        Some("-a$ -l# --algorithm=$ --length=# --raw --tag --untagged --base64 @files"),
        None,
    ),
    (
        "od",
        Some(
            "-A$ -j# -N# -t$ -v -w# -a -b -c -d -f -i -l -o -s -x --address-radix=$ --skip-bytes=# --read-bytes=# --format=$ --output-duplicates --width=? --endian=$ @files",
        ),
        None,
    ),
    (
        "hexdump",
        Some(
            "-b -c -C -d -o -x -v -L -n# -s# -e$ --canonical --length=# --skip=# --no-squeezing @files @writes",
        ),
        None,
    ),
    (
        "strings",
        Some(
            "-a -d -f -n# -t^ -e^ -w -s$ --all --data --print-file-name --bytes=# --radix=^ --encoding=^ --include-all-whitespace --output-separator=$ @files @writes",
        ),
        None,
    ),
    (
        "readlink",
        Some(
            "-e -f -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose --zero @files",
        ),
        None,
    ),
    (
        "realpath",
        Some(
            "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical --quiet --relative-to=$ --relative-base=$ --strip --no-symlinks --zero @files",
        ),
        None,
    ),
    ("basename", None, None),
    ("dirname", None, None),
    (
        "du",
        Some(
            "-0 -a -b -c -D -h -H -k -l -L -m -P -s -S -x -B$ -d# -t$ --null --all --apparent-size --block-size=$ --bytes --total --dereference-args --human-readable --inodes --dereference --count-links --max-depth=# --no-dereference --separate-dirs --si --summarize --threshold=$ --time=? --time-style=$ --exclude=$ --one-file-system @files @writes",
        ),
        None,
    ),
    (
        "df",
        Some(
            "-a -h -H -i -k -l -P -T -B$ -t$ -x$ --all --block-size=$ --human-readable --si --inodes --local --output=? --portability --print-type --type=$ --exclude-type=$ --total --sync --no-sync @files",
        ),
        None,
    ),
    (
        "tree",
        Some(
            "-a -d -l -f -x -L# -P$ -I$ -C -n -s -h -u -g -p -D -F -q -N -Q -r -t -c -v -U -i -A -S -J -X --noreport --dirsfirst --filesfirst --gitignore --matchdirs --ignore-case --prune --du --si --charset=$ --filelimit=# --sort=$ --timefmt=$ @files @writes",
        ),
        None,
    ),
];
