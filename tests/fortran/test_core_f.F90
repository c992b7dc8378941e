! test_core_f - module river from Fortran with mpi_f08: River inside a
! program that owns MPI, version, error codes and messages, optional ierr,
! the logger with a Fortran handler, timers, build and topology strings,
! the node name and binding ranks to cores, sizes in and out (the C
! table's rule: k x1000, Ki x1024).
program test_core_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use river
  use ftest
  implicit none
  integer :: ierr, rank, major, minor, release, level, outcome
  logical :: flag, up, down
  character(len=:), allocatable :: s, name
  character(len=32) :: expect
  type(river_timer) :: t
  real(c_double) :: secs, t0
  integer(c_int64_t) :: v

  call ftest_init(rank)   ! MPI_Init: the program owns MPI

  call river_init(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_init')
  call river_initialized(flag)
  call check(flag, 'river_initialized')

  call river_get_version(major, minor, release)
  call check(major == RIVER_VERSION_MAJOR .and. minor == RIVER_VERSION_MINOR &
             .and. release == RIVER_VERSION_RELEASE, 'version')

  ! Messages and names come from the C table.
  call check(river_strerror(RIVER_EINVAL) == 'invalid argument', 'strerror')
  call check(river_err_name(RIVER_ENOBUFS) == 'RIVER_ENOBUFS', 'err_name')
  call check(river_strerror(12345) == 'unknown error code', 'strerror unknown')

  ! With ierr, a bad argument comes back as a code and changes nothing.
  call river_log_set_level(RIVER_LOG_INFO)
  call river_log_set_level(99, ierr)
  call check(ierr == RIVER_EINVAL, 'set_level 99 gives EINVAL')
  call river_log_get_level(level)
  call check(level == RIVER_LOG_INFO, 'level unchanged')
  call river_log_parse_level('DEBUG', level)
  call check(level == RIVER_LOG_DEBUG, 'parse_level DEBUG')
  call river_log_parse_level('loud', level, ierr)
  call check(ierr == RIVER_EINVAL .and. level == RIVER_LOG_DEBUG, 'parse_level loud')
  call check(river_log_level_name(RIVER_LOG_WARN) == 'warn', 'level_name warn')
  call check(river_log_level_name(7) == 'unknown', 'level_name 7')

  ! The logger reaches a Fortran handler with the rank.
  call river_log_set_handler(capture, c_null_ptr)
  call river_log(RIVER_LOG_INFO, 'from Fortran')
  call river_log(RIVER_LOG_DEBUG, 'filtered out')
  call check(logged == 1, 'handler called once')
  call check(last_level == RIVER_LOG_INFO, 'handler level')
  call check(last_rank == rank, 'handler rank')
  call check(last_log == 'from Fortran', 'handler message')
  call river_log_reset_handler()

  ! Timers.
  call river_timer_reset(t)
  call river_timer_start(t)
  t0 = river_wtime()
  do while (river_wtime() - t0 < 0.01_c_double)
  end do
  call river_timer_stop(t)
  call river_timer_elapsed(t, secs)
  call check(secs >= 0.0099_c_double .and. secs < 5.0_c_double, 'timer')
  call river_timer_stop(t, ierr)
  call check(ierr == RIVER_ESTATE, 'stop twice gives ESTATE')

  ! Sizes: the C parser's table, and what it refuses.
  call river_parse_size('2k', v)
  call check(v == 2000_c_int64_t, 'parse_size 2k')
  call river_parse_size('2Ki', v)
  call check(v == 2048_c_int64_t, 'parse_size 2Ki')
  call river_parse_size('1Ti', v)
  call check(v == 1099511627776_c_int64_t, 'parse_size 1Ti')
  call river_parse_size('9223372036854775807', v)
  call check(v == huge(v), 'parse_size huge')
  call river_parse_size('1m', v, ierr)
  call check(ierr == RIVER_EINVAL .and. v == huge(v), 'parse_size 1m')
  call river_parse_size('9223372036854775808', v, ierr)
  call check(ierr == RIVER_EOVERFLOW .and. v == huge(v), &
             'parse_size 2**63 gives EOVERFLOW')
  call river_parse_size('18446744073709551616', v, ierr)
  call check(ierr == RIVER_EINVAL, 'parse_size 2**64 gives EINVAL')
  call check(river_format_size(999_c_int64_t) == '999 B', 'format_size B')
  call check(river_format_size(105000000_c_int64_t) == '105 MB', &
             'format_size MB')
  call check(river_format_size(1048576_c_int64_t) == '1.05 MB', &
             'format_size 1Mi')

  ! Strings of any length come back whole.
  call river_build_info(s)
  write (expect, '(a,i0,a,i0,a,i0)') 'River ', major, '.', minor, '.', release
  call check(index(s, trim(expect)) == 1, 'build_info starts with version')
  call check(index(s, 'HDF5') > 0 .and. index(s, 'hwloc') > 0, 'build_info libs')
  call river_topo_describe(s)
  call check(index(s, 'host=') == 1 .and. index(s, ' pus=') > 0, 'topo')
  ! The node name is the one river_topo_describe's host= shows.
  call river_node_name(name)
  call check(len(name) > 0 .and. index(s, 'host=' // name // ' ') == 1, &
             'node_name is host=: ' // name)
  ! Binding: the launcher's kept, else River's; then it is kept.
  call river_topo_bind(MPI_COMM_WORLD, outcome)
  call check(outcome == RIVER_BIND_DONE .or. outcome == RIVER_BIND_KEPT, &
             'topo_bind outcome')
  call river_topo_describe(s)
  if (index(s, ' bound=none') == 0) then
    call river_topo_bind(MPI_COMM_WORLD, outcome)
    call check(outcome == RIVER_BIND_KEPT, 'topo_bind keeps a binding')
  end if
  call river_topo_bind(MPI_COMM_NULL, outcome, ierr)
  call check(ierr == RIVER_EINVAL, 'topo_bind MPI_COMM_NULL gives EINVAL')
  deallocate(s, name)   ! the caller owns strings River returns

  call river_finalize(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_finalize')
  call river_finalize(ierr)
  call check(ierr == RIVER_ESTATE, 'second finalize gives ESTATE')

  ! River left MPI up.
  call MPI_Initialized(up)
  call MPI_Finalized(down)
  call check(up .and. .not. down, 'MPI left as found')

  call ftest_finish('test_core_f')
end program test_core_f
