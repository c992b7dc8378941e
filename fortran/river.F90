! river.F90 - module river: River's Fortran 2008 API over iso_c_binding.
!
! Every procedure that can fail takes `integer, optional, intent(out) ::
! ierr` last. With ierr present it receives RIVER_SUCCESS or a negative
! RIVER_E* code; without it, a failure stops the program (error stop)
! with the message. Strings coming back from River are allocatable
! character(len=:) values sized to fit. Private bind(C) interfaces end in
! _c. Constants come from river_constants.inc, generated from river.h.
module river
  use, intrinsic :: iso_c_binding
  implicit none
  private

  include 'river_constants.inc'

  !> An accumulating stopwatch, laid out as C's river_timer.
  type, bind(C), public :: river_timer
    real(c_double) :: start = 0.0_c_double
    real(c_double) :: total = 0.0_c_double
    integer(c_int) :: running = 0
  end type river_timer

  !> A log handler: receives each message that passes the level.
  !> msg is a NUL-terminated C string (see river_c_string).
  abstract interface
    subroutine river_log_handler(level, rank, msg, ctx) bind(C)
      import :: c_int, c_ptr
      integer(c_int), value :: level, rank
      type(c_ptr), value :: msg, ctx
    end subroutine river_log_handler
  end interface
  public :: river_log_handler

  public :: river_init, river_finalize, river_initialized
  public :: river_get_version, river_build_info
  public :: river_strerror, river_err_name
  public :: river_log, river_log_set_level, river_log_get_level
  public :: river_log_set_handler, river_log_reset_handler
  public :: river_wtime
  public :: river_timer_reset, river_timer_start, river_timer_stop
  public :: river_timer_elapsed
  public :: river_topo_describe
  public :: river_c_string

  interface
    function river_init_c(argc, argv) bind(C, name='river_init')
      import :: c_int, c_ptr
      type(c_ptr), value :: argc, argv
      integer(c_int) :: river_init_c
    end function river_init_c
    function river_finalize_c() bind(C, name='river_finalize')
      import :: c_int
      integer(c_int) :: river_finalize_c
    end function river_finalize_c
    function river_initialized_c(flag) bind(C, name='river_initialized')
      import :: c_int
      integer(c_int), intent(out) :: flag
      integer(c_int) :: river_initialized_c
    end function river_initialized_c
    function river_get_version_c(major, minor, release) &
        bind(C, name='river_get_version')
      import :: c_int
      integer(c_int), intent(out) :: major, minor, release
      integer(c_int) :: river_get_version_c
    end function river_get_version_c
    function river_build_info_c(buf, len) bind(C, name='river_build_info')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_build_info_c
    end function river_build_info_c
    function river_topo_describe_c(buf, len) &
        bind(C, name='river_topo_describe')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_topo_describe_c
    end function river_topo_describe_c
    function river_strerror_c(err) bind(C, name='river_strerror')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_strerror_c
    end function river_strerror_c
    function river_err_name_c(err) bind(C, name='river_err_name')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_err_name_c
    end function river_err_name_c
    function river_log_c(level, msg) bind(C, name='river__f_log')
      import :: c_int, c_char
      integer(c_int), value :: level
      character(kind=c_char), intent(in) :: msg(*)
      integer(c_int) :: river_log_c
    end function river_log_c
    function river_log_set_level_c(level) bind(C, name='river_log_set_level')
      import :: c_int
      integer(c_int), value :: level
      integer(c_int) :: river_log_set_level_c
    end function river_log_set_level_c
    function river_log_get_level_c(level) bind(C, name='river_log_get_level')
      import :: c_int
      integer(c_int), intent(out) :: level
      integer(c_int) :: river_log_get_level_c
    end function river_log_get_level_c
    function river_log_set_handler_c(fn, ctx) &
        bind(C, name='river_log_set_handler')
      import :: c_int, c_funptr, c_ptr
      type(c_funptr), value :: fn
      type(c_ptr), value :: ctx
      integer(c_int) :: river_log_set_handler_c
    end function river_log_set_handler_c
    function river_wtime_c() bind(C, name='river_wtime')
      import :: c_double
      real(c_double) :: river_wtime_c
    end function river_wtime_c
    function river_timer_reset_c(t) bind(C, name='river_timer_reset')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_reset_c
    end function river_timer_reset_c
    function river_timer_start_c(t) bind(C, name='river_timer_start')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_start_c
    end function river_timer_start_c
    function river_timer_stop_c(t) bind(C, name='river_timer_stop')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_stop_c
    end function river_timer_stop_c
    function river_timer_elapsed_c(t, seconds) &
        bind(C, name='river_timer_elapsed')
      import :: c_int, c_double, river_timer
      type(river_timer), intent(in) :: t
      real(c_double), intent(out) :: seconds
      integer(c_int) :: river_timer_elapsed_c
    end function river_timer_elapsed_c
    function c_strlen(s) bind(C, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function c_strlen
  end interface

contains

  ! Hand rc to ierr if present; otherwise stop on failure with the
  ! message, naming the procedure that failed.
  subroutine river_check(rc, what, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, optional, intent(out) :: ierr
    character(len=:), allocatable :: msg
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= RIVER_SUCCESS) then
      msg = 'river: ' // what // ': ' // river_strerror(int(rc))
      error stop msg
    end if
  end subroutine river_check

  !> Copy the NUL-terminated C string at ptr into a Fortran string
  !> ('' for a null pointer).
  function river_c_string(ptr) result(str)
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: str
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(ptr)) then
      str = ''
      return
    end if
    n = int(c_strlen(ptr))
    call c_f_pointer(ptr, chars, [n])
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end function river_c_string

  ! Fortran string -> NUL-terminated C character array.
  pure function c_str(s) result(cs)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: cs(len(s) + 1)
    integer :: i
    do i = 1, len(s)
      cs(i) = s(i:i)
    end do
    cs(len(s) + 1) = c_null_char
  end function c_str

  !> Initialise River (and MPI, if the caller has not; see river_init in
  !> river.h). Collective when it initialises MPI.
  subroutine river_init(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_init_c(c_null_ptr, c_null_ptr), 'river_init', ierr)
  end subroutine river_init

  !> Undo one river_init; finalises MPI only if River initialised it.
  subroutine river_finalize(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_finalize_c(), 'river_finalize', ierr)
  end subroutine river_finalize

  subroutine river_initialized(flag, ierr)
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cflag, rc
    rc = river_initialized_c(cflag)
    if (rc == RIVER_SUCCESS) flag = cflag /= 0
    call river_check(rc, 'river_initialized', ierr)
  end subroutine river_initialized

  !> The version of the River library linked at run time.
  subroutine river_get_version(major, minor, release, ierr)
    integer, intent(out) :: major, minor, release
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cmaj, cmin, crel, rc
    rc = river_get_version_c(cmaj, cmin, crel)
    if (rc == RIVER_SUCCESS) then
      major = cmaj
      minor = cmin
      release = crel
    end if
    call river_check(rc, 'river_get_version', ierr)
  end subroutine river_get_version

  ! Ask a caller-buffer C function for its string: first the length,
  ! then the text into a buffer of that size.
  subroutine fetch_string(which, str, rc)
    integer, intent(in) :: which   ! 1: build info, 2: topology
    character(len=:), allocatable, intent(out) :: str
    integer(c_int), intent(out) :: rc
    character(kind=c_char) :: probe(1)
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: n
    integer :: i
    n = 1
    rc = call_fill(probe, n)
    if (rc == RIVER_ENOBUFS) then
      allocate(buf(n))
      rc = call_fill(buf, n)
    else if (rc == RIVER_SUCCESS) then
      allocate(buf(1))  ! empty string fits the probe
      buf(1) = probe(1)
    end if
    if (rc /= RIVER_SUCCESS) return
    allocate(character(len=int(n)) :: str)
    do i = 1, int(n)
      str(i:i) = buf(i)
    end do
  contains
    integer(c_int) function call_fill(b, len)
      character(kind=c_char), intent(out) :: b(*)
      integer(c_size_t), intent(inout) :: len
      if (which == 1) then
        call_fill = river_build_info_c(b, len)
      else
        call_fill = river_topo_describe_c(b, len)
      end if
    end function call_fill
  end subroutine fetch_string

  !> One line describing River and the MPI, HDF5 and hwloc it runs on.
  subroutine river_build_info(info, ierr)
    character(len=:), allocatable, intent(out) :: info
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(1, info, rc)
    call river_check(rc, 'river_build_info', ierr)
  end subroutine river_build_info

  !> One line describing the host, cores and binding of this process.
  subroutine river_topo_describe(desc, ierr)
    character(len=:), allocatable, intent(out) :: desc
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(2, desc, rc)
    call river_check(rc, 'river_topo_describe', ierr)
  end subroutine river_topo_describe

  !> The message for an error code (never empty).
  function river_strerror(err) result(msg)
    integer, intent(in) :: err
    character(len=:), allocatable :: msg
    msg = river_c_string(river_strerror_c(int(err, c_int)))
  end function river_strerror

  !> The name of an error code, e.g. 'RIVER_EINVAL'.
  function river_err_name(err) result(name)
    integer, intent(in) :: err
    character(len=:), allocatable :: name
    name = river_c_string(river_err_name_c(int(err, c_int)))
  end function river_err_name

  !> Log msg at level (RIVER_LOG_ERROR .. RIVER_LOG_DEBUG).
  subroutine river_log(level, msg, ierr)
    integer, intent(in) :: level
    character(len=*), intent(in) :: msg
    integer, optional, intent(out) :: ierr
    call river_check(river_log_c(int(level, c_int), c_str(msg)), &
                     'river_log', ierr)
  end subroutine river_log

  subroutine river_log_set_level(level, ierr)
    integer, intent(in) :: level
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_level_c(int(level, c_int)), &
                     'river_log_set_level', ierr)
  end subroutine river_log_set_level

  subroutine river_log_get_level(level, ierr)
    integer, intent(out) :: level
    integer, optional, intent(out) :: ierr
    integer(c_int) :: clevel, rc
    rc = river_log_get_level_c(clevel)
    if (rc == RIVER_SUCCESS) level = clevel
    call river_check(rc, 'river_log_get_level', ierr)
  end subroutine river_log_get_level

  !> Send log messages to handler (with ctx passed through) instead of
  !> stderr.
  subroutine river_log_set_handler(handler, ctx, ierr)
    procedure(river_log_handler) :: handler
    type(c_ptr), intent(in) :: ctx
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_handler_c(c_funloc(handler), ctx), &
                     'river_log_set_handler', ierr)
  end subroutine river_log_set_handler

  !> Send log messages to stderr again.
  subroutine river_log_reset_handler(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_handler_c(c_null_funptr, c_null_ptr), &
                     'river_log_reset_handler', ierr)
  end subroutine river_log_reset_handler

  !> Seconds on a monotonic wall clock.
  function river_wtime() result(t)
    real(c_double) :: t
    t = river_wtime_c()
  end function river_wtime

  subroutine river_timer_reset(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_reset_c(t), 'river_timer_reset', ierr)
  end subroutine river_timer_reset

  subroutine river_timer_start(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_start_c(t), 'river_timer_start', ierr)
  end subroutine river_timer_start

  subroutine river_timer_stop(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_stop_c(t), 'river_timer_stop', ierr)
  end subroutine river_timer_stop

  subroutine river_timer_elapsed(t, seconds, ierr)
    type(river_timer), intent(in) :: t
    real(c_double), intent(out) :: seconds
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    real(c_double) :: s
    rc = river_timer_elapsed_c(t, s)
    if (rc == RIVER_SUCCESS) seconds = s
    call river_check(rc, 'river_timer_elapsed', ierr)
  end subroutine river_timer_elapsed

end module river
