! ftest - what River's Fortran tests share: MPI start-up and the failure
! count (ftest_init, check, ftest_finish: the totals over the ranks, a
! PASS/FAIL line, MPI_Finalize, error stop 1 on failure), a log handler
! that records what River logs (capture), a private temporary directory
! (ftest_mkdtemp), the libc calls to clean up after it (c_rmdir,
! c_unlink, with cstr for their arguments) and itoa.
module ftest
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use river, only: river_c_string, RIVER_LOG_ERROR
  implicit none
  private
  public :: ftest_init, check, ftest_finish, ftest_mkdtemp
  public :: ftest_stats_ok, ftest_take_file
  public :: capture, cstr, itoa, c_mkdtemp, c_rmdir, c_unlink

  ! What capture saw since a test last reset it: the number of messages,
  ! the last one's level, rank and text, and how many errors contained
  ! `want` (while it is allocated).
  integer, public :: logged = 0, last_level = -1, last_rank = -2, wanted = 0
  character(len=:), allocatable, public :: last_log, want

  integer :: me = -1, failures = 0   ! this rank, its failed checks

  interface itoa
    module procedure itoa_int, itoa_int64
  end interface itoa

  interface
    function c_mkdtemp(template) bind(C, name='mkdtemp')
      import :: c_char, c_ptr
      character(kind=c_char), intent(inout) :: template(*)
      type(c_ptr) :: c_mkdtemp
    end function c_mkdtemp
    function c_rmdir(path) bind(C, name='rmdir')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: c_rmdir
    end function c_rmdir
    function c_unlink(path) bind(C, name='unlink')
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: c_unlink
    end function c_unlink
  end interface

contains

  ! MPI_Init; this rank (and the number of ranks) in MPI_COMM_WORLD.
  subroutine ftest_init(rank, nranks)
    integer, intent(out) :: rank
    integer, optional, intent(out) :: nranks
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    if (present(nranks)) call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    me = rank
    failures = 0
  end subroutine ftest_init

  ! A failed check is counted and named on stderr; the test goes on.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (0, '(a,i0,a,a)') 'rank ', me, ': check failed: ', what
    end if
  end subroutine check

  ! The end of test `name` on every rank: failed checks summed over the
  ! ranks, PASS or FAIL from rank 0, MPI_Finalize, and error stop 1 if any
  ! check failed anywhere.
  subroutine ftest_finish(name)
    character(len=*), intent(in) :: name
    integer :: total
    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, &
                       MPI_COMM_WORLD)
    if (me == 0) then
      if (total == 0) then
        print '(a,a)', 'PASS: ', name
      else
        print '(a,a,a,i0,a)', 'FAIL: ', name, ' (', total, ' failed checks)'
      end if
    end if
    if (allocated(last_log)) deallocate(last_log)
    if (allocated(want)) deallocate(want)
    call MPI_Finalize()
    if (total /= 0) error stop 1
  end subroutine ftest_finish

  ! A River log handler (river_log_set_handler(capture, c_null_ptr)) that
  ! records each message in the public variables above.
  subroutine capture(level, rank, msg, ctx) bind(C)
    integer(c_int), value :: level, rank
    type(c_ptr), value :: msg, ctx
    logged = logged + 1
    last_level = level
    last_rank = rank
    last_log = river_c_string(msg)
    if (allocated(want) .and. level == RIVER_LOG_ERROR) then
      if (index(last_log, want) > 0) wanted = wanted + 1
    end if
  end subroutine capture

  ! A new directory $TMPDIR/<prefix>XXXXXX (/tmp without TMPDIR), made by
  ! rank 0 and its path given to every rank. Collective over
  ! MPI_COMM_WORLD.
  function ftest_mkdtemp(prefix) result(root)
    character(len=*), intent(in) :: prefix
    character(len=:), allocatable :: root
    character(len=4096) :: buf
    character(kind=c_char), allocatable :: t(:)
    type(c_ptr) :: tp
    integer :: st
    if (me == 0) then
      call get_environment_variable('TMPDIR', buf, status=st)
      if (st /= 0 .or. len_trim(buf) == 0) buf = '/tmp'
      buf = trim(buf) // '/' // prefix // 'XXXXXX'
      t = cstr(trim(buf))
      tp = c_mkdtemp(t)
      call check(c_associated(tp), 'mkdtemp')
      buf = river_c_string(tp)
    end if
    call MPI_Bcast(buf, len(buf), MPI_CHARACTER, 0, MPI_COMM_WORLD)
    root = trim(buf)
  end function ftest_mkdtemp

  ! NUL-terminated copy of s for the libc calls above.
  ! A stats file against doc/stats.schema.json and its own totals
  ! (tests/cli/check_stats.py, under $top_srcdir, which make check sets,
  ! with opts): a check that fails where it does not pass.
  subroutine ftest_stats_ok(path, opts)
    character(len=*), intent(in) :: path, opts
    character(len=4096) :: top
    integer :: n, st, es
    call get_environment_variable('top_srcdir', top, n, st)
    if (st /= 0 .or. n == 0) top = '.'
    call execute_command_line("python3 '" // trim(top) // &
        "/tests/cli/check_stats.py' '" // path // "' '" // trim(top) // &
        "/doc/stats.schema.json' " // opts, exitstat=es, cmdstat=st)
    call check(st == 0 .and. es == 0, 'check_stats.py on ' // path)
  end subroutine ftest_stats_ok

  ! The whole of the file at path in text, and the file removed: .false.
  ! (a failed check) if it cannot be opened.
  function ftest_take_file(path, text) result(ok)
    character(len=*), intent(in) :: path
    character(len=:), allocatable, intent(out) :: text
    logical :: ok
    integer :: u, n, st
    open(newunit=u, file=path, access='stream', form='unformatted', &
         status='old', iostat=st)
    ok = st == 0
    call check(ok, 'the file ' // path // ' is there')
    if (.not. ok) return
    inquire(unit=u, size=n)
    allocate(character(len=n) :: text)
    read(u) text
    close(u, status='delete')
  end function ftest_take_file

  pure function cstr(s) result(cs)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: cs(len(s) + 1)
    cs = transfer(s // c_null_char, c_null_char, len(s) + 1)
  end function cstr

  function itoa_int(k) result(t)
    integer, intent(in) :: k
    character(len=:), allocatable :: t
    t = itoa_int64(int(k, c_int64_t))
  end function itoa_int

  function itoa_int64(k) result(t)
    integer(c_int64_t), intent(in) :: k
    character(len=:), allocatable :: t
    character(len=24) :: b
    write (b, '(i0)') k
    t = trim(b)
  end function itoa_int64
end module ftest
