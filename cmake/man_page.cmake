# sfumato.1 from `sfumato --help-all` (cmake -P; SFUMATO: the program, OUT: the .1 file to write,
# VERSION). The hand-written parts say what the help does not (what sfumato is, the files, exit
# codes, examples); the commands and their options are the program's own help, verbatim, so the
# page cannot drift from the program. Also writes OUT.gz (what is installed).
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND "${SFUMATO}" --help-all OUTPUT_VARIABLE help ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SFUMATO} --help-all failed (${rc}): ${err}")
endif()

# roff: a backslash is \e, a line starting with . or ' would be a request, - is a hyphen where
# an option needs a minus sign.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(REPLACE "-" "\\-" help "${help}")
# Each command's section: "== sfumato NAME: SUMMARY" opens it; its help is shown as printed.
string(REGEX REPLACE "\n== sfumato ([^:\n]+): ([^\n]*)\n" "\n.fi\n.SS sfumato \\1\n\\2\n.nf\n" help "${help}")

set(page [=[
.TH SFUMATO 1 "" "sfumato @VERSION@" "User Commands"
.SH NAME
sfumato \- cycle\-level simulator of an Ascend\-like NPU
.SH SYNOPSIS
.B sfumato
.I command
.RI [ options ]
.br
.B sfumato
.I command
.B \-\-help
.br
.B sfumato
.BR \-\-version " | " \-\-help\-all
.SH DESCRIPTION
.B sfumato
simulates a DaVinci\-style (Ascend\-like) NPU cycle by cycle on SystemC: AI cores with a scalar
unit and in\-order pipes, local buffers, an L2, HBM with DRAM timing, DMA and a task scheduler,
driven by a device runtime, an ONNX graph executor and a collective library over chip\-to\-chip
links. Operator kernels, ONNX models, workload traces and training steps run on it; every run
prints cycles and bandwidths and can write a timeline (trace.json, for Perfetto), statistics
(stats.h5) and a summary (summary.json) with
.BR \-\-out " " \fIDIR\fR.
.PP
A chip is described by INI files given with
.B \-\-config
(repeatable, later files override) and
.B \-\-set
.IR key = value ;
.B sfumato params
lists every parameter.
A
.B \-\-config
or
.B \-\-system
value is a file, or the name of a preset shipped with sfumato
.RI ( tiny ,
.IR ascend910b\-like ,
or
.IR configs/tiny.ini ,
the spelling the documentation uses), looked up in the presets directory (see FILES).
.B sfumato \-\-version
prints the directory this program uses.
.SH OPTIONS
.TP
.B \-\-version
The version and the presets directory.
.TP
.B \-\-help\-all
The command list and every command's help, the text of the COMMANDS section below.
.TP
.BR \-h ", " \-\-help
After a command: its options.
.SH COMMANDS
.nf
@HELP@
.fi
.SH FILES
.TP
.I PREFIX/share/sfumato/configs
Chip presets (tiny.ini, tiny\-simple\-mem.ini, ascend910\-like.ini, ascend910b\-like.ini) and
system presets (system\-*.ini), PREFIX being the directory above the program's bin/
.RI ( /usr
for the Debian package).
.TP
.I PREFIX/share/doc/sfumato
README.md and the user guide (guide/*.md): walk\-throughs of experiments from configs, models,
trace replay, validating runtime changes, writing kernels, several chips and the outputs.
.TP
.I PREFIX/lib/cmake/sfumato, PREFIX/lib/cmake/ASC
CMake packages: find_package(sfumato) gives sfumato::ascendc (the Ascend C layer with a
simulator inside), find_package(ASC) the ASC language for Ascend C sources.
.SH EXIT STATUS
0 success; 1 a check failed or an internal error; 2 bad input (the message names the option,
file or parameter); 3 a race (with race checking on); 4 a deadlock, or the run passed
.BR \-\-max\-cycles ;
130 or 143 interrupted (SIGINT, SIGTERM), with the outputs of the run so far.
.SH EXAMPLES
.nf
sfumato info \-\-config ascend910b\-like
sfumato kernel add \-\-n 4194304 \-\-config configs/ascend910b\-like.ini \-\-out out/add
sfumato run zoo:resnet18 \-\-config configs/ascend910b\-like.ini \-\-mode timing \-\-out out/r18
sfumato diff out/r18 out/r18\-nofuse \-\-by type
sfumato report out/add \-o out/add/report.html
.fi
.SH SEE ALSO
.I PREFIX/share/doc/sfumato/README.md
(the tour),
.I PREFIX/share/doc/sfumato/reference.md
(configuration rules, exit codes, outputs).
]=])
string(REPLACE "@VERSION@" "${VERSION}" page "${page}")
string(REGEX REPLACE "\n+$" "" help "${help}")
string(REPLACE "@HELP@" "${help}" page "${page}")
string(REGEX REPLACE "^\n" "" page "${page}")
file(WRITE "${OUT}" "${page}")
file(ARCHIVE_CREATE OUTPUT "${OUT}.gz" PATHS "${OUT}" FORMAT raw COMPRESSION GZip)
