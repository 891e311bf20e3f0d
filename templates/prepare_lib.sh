usage_error() {
    echo "prepare: $*" >&2
    exit 2
}

tipc_err() {
    echo "prepare: error: $*" >&2
}

fail() {
    tipc_err "$@"
    exit 1
}

# Settings from the environment, checked before anything is done.
case ${TIPC_OFFLINE:-0} in
1 | true | yes) OFFLINE=1 ;;
"" | 0 | false | no) OFFLINE=0 ;;
*) usage_error "TIPC_OFFLINE must be 1 or 0, not '${TIPC_OFFLINE:-}'" ;;
esac
RETRIES=${TIPC_RETRIES:-3}
[[ $RETRIES =~ ^[1-9][0-9]*$ ]] || usage_error "TIPC_RETRIES must be a positive integer, not '$RETRIES'"
BACKOFF=${TIPC_BACKOFF:-1}
[[ $BACKOFF =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "TIPC_BACKOFF must be a number of seconds, not '$BACKOFF'"
TIMEOUT=${TIPC_TIMEOUT:-30}
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || usage_error "TIPC_TIMEOUT must be a positive integer, not '$TIMEOUT'"
MIRROR=${TIPC_MIRROR:-}
MIRROR=${MIRROR%/}
if [[ -n $MIRROR && ! $MIRROR =~ ^(https?|file):// ]]; then
    usage_error "TIPC_MIRROR must be an http(s) or file URL, not '$MIRROR'"
fi
MIRROR_LAYOUT=${TIPC_MIRROR_LAYOUT:-base}
case $MIRROR_LAYOUT in
base | host) ;;
*) usage_error "TIPC_MIRROR_LAYOUT must be base or host, not '$MIRROR_LAYOUT'" ;;
esac
if [[ -n ${TIPC_CACHE:-} ]]; then
    CACHE=$TIPC_CACHE
elif [[ -n ${HOME:-} ]]; then
    CACHE=$HOME/.cache/tipcgen
else
    usage_error "set TIPC_CACHE (or HOME) to say where downloads are cached"
fi
DOWNLOADER=${TIPC_DOWNLOADER:-}
case $DOWNLOADER in
"")
    if command -v curl >/dev/null 2>&1; then
        DOWNLOADER=curl
    elif command -v wget >/dev/null 2>&1; then
        DOWNLOADER=wget
    else
        DOWNLOADER=none
    fi
    ;;
curl | wget)
    command -v "$DOWNLOADER" >/dev/null 2>&1 || usage_error "TIPC_DOWNLOADER=$DOWNLOADER, but $DOWNLOADER is not installed"
    ;;
*) usage_error "TIPC_DOWNLOADER must be curl or wget, not '$DOWNLOADER'" ;;
esac
PIP_PYTHON=${python_name:-python3}

# tipc_sha256 OUT FILE: the sha256 of FILE.
tipc_sha256() {
    local -n _h_out=$1
    local _h_line
    if command -v sha256sum >/dev/null 2>&1; then
        _h_line=$(sha256sum <"$2") || return 1
    else
        _h_line=$(shasum -a 256 <"$2") || return 1
    fi
    _h_out=${_h_line%% *}
}

# tipc_size OUT FILE: the size of FILE in bytes.
tipc_size() {
    local -n _z_out=$1
    _z_out=$(wc -c <"$2") || return 1
    _z_out=${_z_out//[[:space:]]/}
}

# tipc_http_status OUT LOG: the last HTTP status in wget's --server-response LOG.
tipc_http_status() {
    local -n _st_out=$1
    local _st_line _st_re='^ +HTTP/[0-9.]+ ([0-9]{3})'
    _st_out=""
    while IFS= read -r _st_line; do
        if [[ $_st_line =~ $_st_re ]]; then
            _st_out=${BASH_REMATCH[1]}
        fi
    done <"$2"
}

# tipc_source OUT URL BASE: where to fetch URL from. With TIPC_MIRROR set: layout base swaps the
# step's mirror BASE for it (URL itself when BASE is empty or not a prefix, with a warning);
# layout host fetches every URL as $TIPC_MIRROR/<host>/<path>.
tipc_source() {
    local -n _src_out=$1
    _src_out=$2
    if [[ -z $MIRROR ]]; then
        return 0
    fi
    if [[ $MIRROR_LAYOUT == host && $2 == *://* ]]; then
        _src_out=$MIRROR/${2#*://}
    elif [[ -n $3 && $2 == "$3"/* ]]; then
        _src_out=$MIRROR${2#"$3"}
    else
        echo "prepare: warning: TIPC_MIRROR is set but $2 declares no \`mirror\` base it lies under, so it is fetched from its origin; declare \`mirror:\` on the step, or set TIPC_MIRROR_LAYOUT=host to fetch every URL as \$TIPC_MIRROR/<host>/<path>" >&2
    fi
}

# tipc_get URL PART: download URL into PART, resuming what PART already holds and retrying
# transient failures (no connection, cut transfers, 408, 429, 5xx) with back-off.
tipc_get() {
    local url=$1 part=$2 try=1 delay=$BACKOFF code rc why
    if [[ $url == file://* ]]; then
        cp -f -- "${url#file://}" "$part" && return 0
        tipc_err "cannot copy $url"
        return 1
    fi
    while :; do
        code=""
        case $DOWNLOADER in
        curl)
            code=$(curl -sS -L -f -C - --connect-timeout "$TIMEOUT" --speed-limit 1 --speed-time "$TIMEOUT" \
                -w '%{http_code}' -o "$part" -- "$url")
            rc=$?
            if ((rc == 33)); then
                echo "prepare: the server cannot resume $url; starting again"
                rm -f -- "$part"
            fi
            ;;
        wget)
            wget -nv -S -c --tries=1 --timeout="$TIMEOUT" -O "$part" -- "$url" 2>"$part.log"
            rc=$?
            tipc_http_status code "$part.log"
            if ((rc != 0)); then
                grep -v '^  ' "$part.log" >&2
            fi
            rm -f -- "$part.log"
            ;;
        *)
            tipc_err "cannot download $url: neither curl nor wget is installed"
            return 1
            ;;
        esac
        if ((rc == 0)); then
            return 0
        fi
        if [[ $code == 416 && -s $part ]]; then
            return 0 # PART was complete already; the size and sha256 checks tell
        fi
        if [[ -f $part && ! -s $part ]]; then
            rm -f -- "$part"
        fi
        why="$DOWNLOADER exit code $rc"
        if [[ $code =~ ^[1-9][0-9][0-9]$ ]]; then
            why="HTTP $code"
        fi
        case $code in
        408 | 429 | 5??) ;;
        4??)
            tipc_err "download failed ($why): $url"
            return 1
            ;;
        esac
        if ((try >= RETRIES)); then
            tipc_err "download failed after $try tries ($why): $url"
            return 1
        fi
        echo "prepare: try $try of $RETRIES failed ($why); retrying $url in ${delay}s"
        sleep "$delay"
        delay=$(awk -v d="$delay" 'BEGIN { print d * 2 }')
        try=$((try + 1))
    done
}

# tipc_cache_fill URL BASE SHA SIZE CFILE: make CFILE, URL's entry in the cache, hold its bytes,
# checked against SIZE and SHA when they are known. Prepares sharing one cache (nodes whose home
# is on NFS) take turns with flock on the cache directory (no lock file is left behind): the
# second finds the first's download done instead of racing it on the same .part file. Where
# flock is missing or refuses (some NFS mounts), prepare goes on unlocked.
tipc_cache_fill() {
    local lock_fd
    mkdir -p -- "$CACHE" || fail "cannot create $CACHE"
    if command -v flock >/dev/null 2>&1 && { exec {lock_fd}<"$CACHE"; } 2>/dev/null; then
        flock "$lock_fd" 2>/dev/null # released when done, or when a failure exits prepare
        tipc_cache_fill_locked "$@"
        exec {lock_fd}<&-
        return 0
    fi
    tipc_cache_fill_locked "$@"
}

tipc_cache_fill_locked() {
    local url=$1 base=$2 sha=$3 size=$4 cfile=$5 src part actual have
    if [[ -f $cfile ]]; then
        if [[ -z $sha ]]; then
            echo "prepare: cached $url"
            return 0
        fi
        tipc_sha256 actual "$cfile" || fail "cannot read $cfile"
        if [[ $actual == "$sha" ]]; then
            echo "prepare: cached $url"
            return 0
        fi
        echo "prepare: the cached copy of $url is corrupt (sha256 $actual); fetching it again" >&2
        rm -f -- "$cfile"
    fi
    if ((OFFLINE)); then
        fail "offline (TIPC_OFFLINE=1) and not in the cache $CACHE: $url"
    fi
    mkdir -p -- "${cfile%/*}" || fail "cannot create ${cfile%/*}"
    part=$cfile.part
    tipc_source src "$url" "$base"
    if [[ $src == "$url" ]]; then
        echo "prepare: downloading $url"
    else
        echo "prepare: downloading $src (mirror of $url)"
    fi
    if ! tipc_get "$src" "$part"; then
        exit 1
    fi
    tipc_size have "$part" || fail "cannot read $part"
    if [[ -n $size && $have != "$size" ]]; then
        rm -f -- "$part"
        rmdir -- "${cfile%/*}" 2>/dev/null
        fail "size mismatch for $src: expected $size bytes, got $have"
    fi
    tipc_sha256 actual "$part" || fail "cannot read $part"
    if [[ -n $sha && $actual != "$sha" ]]; then
        rm -f -- "$part"
        rmdir -- "${cfile%/*}" 2>/dev/null
        fail "sha256 mismatch for $src: expected $sha, actual $actual"
    fi
    if [[ -z $sha ]]; then
        echo "prepare: $url is unverified (no sha256 in the spec); it has sha256 $actual"
    fi
    mv -f -- "$part" "$cfile" || fail "cannot write $cfile"
}

# tipc_stamp_ok TO FILE SOURCE SHA: TO/.tipcgen/FILE.stamp records SOURCE (and SHA, when given)
# and every entry it lists is still in TO.
tipc_stamp_ok() {
    local to=$1 stamp=$1/.tipcgen/$2.stamp source=$3 sha=$4 line key value ok_source=0 ok_sha=0
    [[ -f $stamp ]] || return 1
    while IFS= read -r line || [[ -n $line ]]; do
        key=${line%% *}
        value=${line#* }
        case $key in
        source) [[ $value == "$source" ]] && ok_source=1 ;;
        sha256) [[ -z $sha || $value == "$sha" ]] && ok_sha=1 ;;
        entry) [[ -e $to/$value || -L $to/$value ]] || return 1 ;;
        esac
    done <"$stamp"
    ((ok_source && ok_sha))
}

# tipc_clean OUT PATH: PATH without empty and `.` components; fails when PATH is absolute
# or has a `..` component.
tipc_clean() {
    local -n _c_out=$1
    local _c_part
    local -a _c_parts=() _c_keep=()
    _c_out=""
    [[ $2 == /* ]] && return 1
    IFS=/ read -r -a _c_parts <<<"$2"
    for _c_part in "${_c_parts[@]}"; do
        case $_c_part in
        "" | .) ;;
        ..) return 1 ;;
        *) _c_keep+=("$_c_part") ;;
        esac
    done
    local IFS=/
    _c_out="${_c_keep[*]}"
}

# The symbolic links of the archive being checked (cleaned member name -> 1).
declare -A TIPC_LINKS=()

# tipc_inside_link MEMBER: 0 when a proper prefix of MEMBER is a link of the archive.
tipc_inside_link() {
    local prefix="" part
    local -a parts=()
    IFS=/ read -r -a parts <<<"$1"
    unset 'parts[-1]'
    for part in "${parts[@]}"; do
        prefix+=${prefix:+/}$part
        [[ -n ${TIPC_LINKS[$prefix]+x} ]] && return 0
    done
    return 1
}

# tipc_link_inside MEMBER TARGET: 0 when the link MEMBER -> TARGET stays inside the directory the
# archive is extracted into, with no `..` after a component that is itself a link.
tipc_link_inside() {
    local part prefix i
    local -a dir=() parts=() stack=()
    [[ -n $2 && $2 != /* ]] || return 1
    IFS=/ read -r -a dir <<<"$1"
    unset 'dir[-1]'
    IFS=/ read -r -a parts <<<"$2"
    for part in "${dir[@]}" "${parts[@]}"; do
        case $part in
        "" | .) ;;
        ..)
            ((${#stack[@]})) || return 1
            prefix=""
            for i in "${!stack[@]}"; do
                prefix+=${prefix:+/}${stack[i]}
                [[ -n ${TIPC_LINKS[$prefix]+x} ]] && return 1
            done
            unset 'stack[-1]'
            ;;
        *) stack+=("$part") ;;
        esac
    done
    return 0
}

# tipc_check_names LABEL NAME...: refuse absolute or `..` names, names inside a link of the
# archive, names twice when one is a link, and a top-level .tipcgen.
tipc_check_names() {
    local label=$1 name clean
    local -A seen=()
    shift
    for name in "$@"; do
        if ! tipc_clean clean "$name"; then
            tipc_err "refusing $label: member '$name' is absolute or contains '..'"
            return 1
        fi
        [[ -n $clean ]] || continue
        if [[ ${clean%%/*} == .tipcgen ]]; then
            tipc_err "refusing $label: member '$name' would overwrite prepare's .tipcgen state"
            return 1
        fi
        if tipc_inside_link "$clean"; then
            tipc_err "refusing $label: member '$name' lies inside a link of the archive"
            return 1
        fi
        if [[ -n ${seen[$clean]+x} && (-n ${TIPC_LINKS[$clean]+x}) ]]; then
            tipc_err "refusing $label: '$name' appears twice and once as a link"
            return 1
        fi
        seen[$clean]=1
    done
}

# tipc_check_tar ARCHIVE LABEL: refuse, before anything is written, a tarball whose members would land
# outside the directory it is extracted into (absolute or `..` names, links leading out of it,
# hard links to such names) or that holds devices or fifos.
tipc_check_tar() {
    local archive=$1 label=$2 listing line type name target clean plain re i
    local -a names=() links=() targets=()
    re='^(.)[^ ]* +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +"((\\.|[^\\"])*)"( (->|link to) "((\\.|[^\\"])*)")?$'
    listing=$(LC_ALL=C tar --absolute-names --quoting-style=c -tvf "$archive") || {
        tipc_err "cannot read $archive (not a tar archive?)"
        return 1
    }
    TIPC_LINKS=()
    while IFS= read -r line; do
        [[ -n $line ]] || continue
        if [[ ! $line =~ $re ]]; then
            tipc_err "refusing $label: cannot read its listing line: $line"
            return 1
        fi
        type=${BASH_REMATCH[1]}
        name=${BASH_REMATCH[2]}
        target=${BASH_REMATCH[6]}
        plain=${name//\\\\/}
        if [[ $plain == *\\n* ]]; then
            tipc_err "refusing $label: member \"$name\" has a newline in its name"
            return 1
        fi
        if ! tipc_clean clean "$name"; then
            tipc_err "refusing $label: member \"$name\" is absolute or contains '..'"
            return 1
        fi
        case $type in
        - | d | C | S) ;;
        l)
            if [[ -z $clean ]]; then
                tipc_err "refusing $label: member \"$name\" is a link to the extraction directory itself"
                return 1
            fi
            TIPC_LINKS[$clean]=1
            links+=("$clean")
            targets+=("$target")
            ;;
        h)
            if ! tipc_clean plain "$target"; then
                tipc_err "refusing $label: hard link \"$name\" points outside (\"$target\")"
                return 1
            fi
            ;;
        *)
            tipc_err "refusing $label: member \"$name\" is a device, fifo or other special file"
            return 1
            ;;
        esac
        names+=("$name")
    done <<<"$listing"
    tipc_check_names "$label" "${names[@]}" || return 1
    for i in "${!links[@]}"; do
        if ! tipc_link_inside "${links[i]}" "${targets[i]}"; then
            tipc_err "refusing $label: link \"${links[i]}\" -> \"${targets[i]}\" points outside"
            return 1
        fi
    done
}

# tipc_zip_pattern OUT NAME: NAME as an unzip pattern matching only itself.
tipc_zip_pattern() {
    local -n _zp_out=$1
    _zp_out=${2//[[]/[[]}
    _zp_out=${_zp_out//[*]/[*]}
    _zp_out=${_zp_out//[?]/[?]}
}

# tipc_check_zip ARCHIVE LABEL: the same checks for a zip archive (links are entries made on Unix
# with the link file type; their target is their content).
tipc_check_zip() {
    local archive=$1 label=$2 listing line name clean pattern target re i
    local -a names=() links=() targets=()
    re='^(.)[^ ]* +[^ ]+ +[^ ]+ +[0-9]+ +[^ ]+ +[^ ]+ +[0-9]{8}\.[0-9]{6} (.*)$'
    listing=$(unzip -Z1 "$archive") || {
        tipc_err "cannot read $archive (not a zip archive?)"
        return 1
    }
    mapfile -t names <<<"$listing"
    for name in "${names[@]}"; do
        if [[ $name == *\\* ]]; then
            tipc_err "refusing $label: member '$name' has a backslash in its name"
            return 1
        fi
    done
    TIPC_LINKS=()
    listing=$(unzip -Z -sT "$archive") || {
        tipc_err "cannot read $archive"
        return 1
    }
    while IFS= read -r line; do
        if [[ $line =~ $re && ${BASH_REMATCH[1]} == l ]]; then
            name=${BASH_REMATCH[2]}
            if ! tipc_clean clean "$name" || [[ -z $clean ]]; then
                tipc_err "refusing $label: link '$name' is absolute or contains '..'"
                return 1
            fi
            tipc_zip_pattern pattern "$name"
            target=$(unzip -p "$archive" "$pattern") || {
                tipc_err "cannot read link '$name' in $archive"
                return 1
            }
            TIPC_LINKS[$clean]=1
            links+=("$clean")
            targets+=("$target")
        fi
    done <<<"$listing"
    tipc_check_names "$label" "${names[@]}" || return 1
    for i in "${!links[@]}"; do
        if ! tipc_link_inside "${links[i]}" "${targets[i]}"; then
            tipc_err "refusing $label: link \"${links[i]}\" -> \"${targets[i]}\" points outside"
            return 1
        fi
    done
}

# tipc_check_tree DIR SOURCE: after extraction, every link under DIR still resolves inside DIR.
tipc_check_tree() {
    local tree=$1 source=$2 root link real
    root=$(cd -- "$tree" && pwd -P) || return 1
    while IFS= read -r -d '' link; do
        real=$(realpath -m -- "$link") || return 1
        case $real in
        "$root" | "$root"/*) ;;
        *)
            tipc_err "refusing $source: link ${link#"$tree"/} points outside ($(readlink -- "$link"))"
            return 1
            ;;
        esac
    done < <(find "$tree" -type l -print0)
}

# tipc_replace NEW DEST STATE: move NEW to DEST in one rename; what DEST held is moved aside into
# STATE first when a rename cannot replace it (a directory), then deleted.
tipc_replace() {
    local new=$1 dest=$2 state=$3 trash
    if [[ -e $dest || -L $dest ]] && [[ (-d $dest && ! -L $dest) || (-d $new && ! -L $new) ]]; then
        trash=$(mktemp -d "$state/old.XXXXXX") || fail "cannot create a directory in $state"
        mv -T -- "$dest" "$trash/old" || fail "cannot move $dest aside"
        mv -T -- "$new" "$dest" || fail "cannot move $dest into place"
        rm -rf -- "$trash"
        return 0
    fi
    mv -fT -- "$new" "$dest" || fail "cannot move $dest into place"
}

# tipc_inside DIR DOING: refuse (exit 1) to DOING when DIR, as it resolves now (through any
# symbolic link on the way, made by an earlier step or already there), lies outside the model
# repo root (the current directory). `tipcgen prepare` checks the same (fetch.inside_root).
tipc_inside() {
    local root real
    root=$(pwd -P) || fail "cannot resolve the current directory"
    real=$(realpath -m -- "$1") || fail "cannot resolve $1"
    case $real in
    "$root" | "$root"/*) ;;
    *) fail "refusing to $2: $1 leads to $real, outside the model repo $root (a symbolic link on the way)" ;;
    esac
}

# tipc_install SRC SOURCE SHA TO FILE FORMAT [OLD NEW]...: copy SRC to TO/FILE (FORMAT file) or
# extract it into TO (tar, zip), renaming top-level entries OLD to NEW; then write the stamp.
tipc_install() {
    local src=$1 source=$2 sha=$3 to=$4 file=$5 format=$6 state tmp old new entry
    local -a entries=()
    shift 6
    state=$to/.tipcgen
    tipc_inside "$to" "write into $to"
    tipc_inside "$state" "write prepare's state into $to"
    if [[ -z $sha ]]; then
        tipc_sha256 sha "$src" || fail "cannot read $src"
    fi
    case $format in
    tar) tipc_check_tar "$src" "$source" || exit 1 ;;
    zip) tipc_check_zip "$src" "$source" || exit 1 ;;
    esac
    mkdir -p -- "$state" || fail "cannot create $state"
    tmp=$(mktemp -d "$state/tmp.XXXXXX") || fail "cannot create a temporary directory in $state"
    case $format in
    file) cp -- "$src" "$tmp/$file" || fail "cannot copy $src" ;;
    tar) tar -xf "$src" -C "$tmp" || fail "cannot extract $src" ;;
    zip) unzip -qq -o "$src" -d "$tmp" || fail "cannot extract $src" ;;
    esac
    if [[ $format != file ]] && ! tipc_check_tree "$tmp" "$source"; then
        rm -rf -- "$tmp"
        exit 1
    fi
    while (($# >= 2)); do
        old=$1
        new=$2
        shift 2
        if [[ ! -e $tmp/$old && ! -L $tmp/$old ]]; then
            rm -rf -- "$tmp"
            fail "cannot rename $old to $new: $source has no top-level entry $old"
        fi
        if [[ -e $tmp/$new || -L $tmp/$new ]]; then
            rm -rf -- "$tmp"
            fail "cannot rename $old to $new: $source has an entry $new too"
        fi
        mv -T -- "$tmp/$old" "$tmp/$new" || fail "cannot rename $old to $new"
    done
    mapfile -t entries < <(find "$tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort)
    for entry in "${entries[@]}"; do
        tipc_replace "$tmp/$entry" "$to/$entry" "$state"
    done
    rm -rf -- "$tmp"
    if ! {
        printf 'source %s\n' "$source"
        printf 'sha256 %s\n' "$sha"
        if ((${#entries[@]})); then
            printf 'entry %s\n' "${entries[@]}"
        fi
    } >"$state/$file.stamp.tmp"; then
        fail "cannot write $state/$file.stamp"
    fi
    mv -f -- "$state/$file.stamp.tmp" "$state/$file.stamp" || fail "cannot write $state/$file.stamp"
    if [[ $format == file ]]; then
        echo "prepare: wrote $to/$file"
    else
        echo "prepare: extracted $file into $to: ${entries[*]}"
    fi
}

PHASE=check
MISSING=()

# tipc_download --url URL [--mirror BASE] [--sha256 SHA] [--size BYTES] --cache PATH --to DIR
#               --file NAME --format file|tar|zip [--rename OLD NEW]...: one artifact, fetched into
# $CACHE/PATH, then copied to DIR/NAME (file) or extracted into DIR.
tipc_download() {
    local url="" base="" sha="" size="" cfile="" to="" file="" format="" m
    local -a rename=()
    while (($# >= 2)); do
        case $1 in
        --url) url=$2 ;;
        --mirror) base=$2 ;;
        --sha256) sha=$2 ;;
        --size) size=$2 ;;
        --cache) cfile=$CACHE/$2 ;;
        --to) to=$2 ;;
        --file) file=$2 ;;
        --format) format=$2 ;;
        --rename)
            rename+=("$2" "${3:-}")
            shift
            ;;
        *) fail "tipc_download: unknown option $1" ;;
        esac
        shift 2
    done
    if tipc_stamp_ok "$to" "$file" "$url" "$sha"; then
        if [[ $PHASE == run ]]; then
            echo "prepare: up to date: $url in $to"
        fi
        return 0
    fi
    if [[ $PHASE == check ]]; then
        if [[ ! -f $cfile ]]; then
            for m in "${MISSING[@]}"; do
                [[ $m == "$url" ]] && return 0
            done
            MISSING+=("$url")
        fi
        return 0
    fi
    tipc_cache_fill "$url" "$base" "$sha" "$size" "$cfile"
    tipc_install "$cfile" "$url" "$sha" "$to" "$file" "$format" "${rename[@]}"
}

# tipc_extract ARCHIVE FORMAT TO FILE: an archive that ships with the model repo.
tipc_extract() {
    local archive=$1 format=$2 to=$3 file=$4 sha
    [[ $PHASE == run ]] || return 0
    [[ -f $archive ]] || fail "archive not found: $archive"
    tipc_sha256 sha "$archive" || fail "cannot read $archive"
    if tipc_stamp_ok "$to" "$file" "$archive" "$sha"; then
        echo "prepare: up to date: $archive in $to"
        return 0
    fi
    tipc_install "$archive" "$archive" "$sha" "$to" "$file" "$format"
}

# tipc_link PATH TARGET: `ln -s TARGET PATH`, replacing a link or a file but never a directory.
tipc_link() {
    local path=$1 target=$2
    [[ $PHASE == run ]] || return 0
    tipc_inside "$(dirname -- "$path")" "link $path"
    if [[ -L $path ]]; then
        if [[ $(readlink -- "$path") == "$target" ]]; then
            echo "prepare: up to date: $path -> $target"
            return 0
        fi
    elif [[ -d $path ]]; then
        fail "cannot link $path -> $target: a directory is in the way"
    fi
    mkdir -p -- "$(dirname -- "$path")" || fail "cannot create the directory of $path"
    ln -sfn -- "$target" "$path" || fail "cannot link $path -> $target"
    echo "prepare: linked $path -> $target"
}

# tipc_remove PATH...: rm -rf.
tipc_remove() {
    local p
    [[ $PHASE == run ]] || return 0
    for p in "$@"; do
        tipc_inside "$(dirname -- "$p")" "remove $p"
    done
    rm -rf -- "$@" || fail "cannot remove $*"
    echo "prepare: removed $*"
}

# tipc_pip REQUIREMENT...: pip install with the config's python (offline: from nothing but what
# is installed).
tipc_pip() {
    local -a opts=()
    [[ $PHASE == run ]] || return 0
    if ((OFFLINE)); then
        opts=(--no-index)
    fi
    echo "prepare: $PIP_PYTHON -m pip install $*"
    "$PIP_PYTHON" -m pip install "${opts[@]}" "$@" || fail "pip install failed: $*"
}

# tipc_run DIR COMMAND: a plain shell command of the spec.
tipc_run() {
    [[ $PHASE == run ]] || return 0
    tipc_inside "$1" "run a command in $1"
    echo "prepare: running in $1: $2"
    (cd -- "$1" && bash -c "$2") || fail "command failed: $2"
}
